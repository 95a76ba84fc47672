import ArgumentParser
import FormDataKitTesting
print("x")
