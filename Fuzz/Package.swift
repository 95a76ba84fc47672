// swift-tools-version:6.0
// libFuzzer targets for FormDataKit, kept apart so the main package has no unsafe flags.
// Build: swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
// Run:   .build/release/FuzzParser -max_total_time=30 Corpus/parser > parser.log 2>&1
//        (FuzzCapture with Corpus/capture, FuzzInflate with Corpus/inflate, FuzzReceiver with
//        Corpus/receiver: raw requests to an in-process FormReceiver on 127.0.0.1; run.sh runs all four)
import PackageDescription

let package = Package(
    name: "FormDataKitFuzz",
    dependencies: [.package(name: "FormDataKit", path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzParser",
            dependencies: [.product(name: "FormDataKitTesting", package: "FormDataKit")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzCapture",
            dependencies: [.product(name: "FormDataKitTesting", package: "FormDataKit")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzReceiver",
            dependencies: [.product(name: "FormDataKitTesting", package: "FormDataKit")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzInflate",
            dependencies: [.product(name: "FormDataKit", package: "FormDataKit")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
