// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FormDataKit",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "FormDataKit", targets: ["FormDataKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .yum(["zlib-devel"]), .brew(["zlib"])]
        ),
        .target(
            name: "FormDataKit",
            dependencies: [
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "formdata-bench",
            dependencies: ["FormDataKit"]
        ),
        .testTarget(
            name: "FormDataKitTests",
            dependencies: ["FormDataKit"],
            exclude: ["Support/parse_form.py"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
