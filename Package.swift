// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FormDataKit",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "FormDataKit", targets: ["FormDataKit"]),
        .library(name: "FormDataKitAF", targets: ["FormDataKitAF"]),
        .library(name: "FormDataKitTesting", targets: ["FormDataKitTesting"]),
        .executable(name: "formdata", targets: ["formdata"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
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
        .target(
            name: "FormDataKitAF",
            dependencies: ["FormDataKit"]
        ),
        .target(
            name: "FormDataKitTesting",
            dependencies: [
                "FormDataKit",
                "CZlib",
                .product(name: "FlyingFox", package: "FlyingFox"),
            ]
        ),
        .executableTarget(
            name: "formdata",
            dependencies: [
                "FormDataKit",
                "FormDataKitTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "formdata-bench",
            dependencies: ["FormDataKit"]
        ),
        .testTarget(
            name: "FormDataKitTests",
            dependencies: ["FormDataKit", "FormDataKitTesting"],
            exclude: ["Support/parse_form.py", "Transport/Support/form_server.py"]
        ),
        .executableTarget(
            name: "reliability-helper",
            dependencies: ["FormDataKit"],
            path: "Tests/ReliabilityHelper"
        ),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: ["FormDataKit", "FormDataKitAF", "FormDataKitTesting"],
            exclude: ["Support/form_oracle.py", "Support/fault_server.py"]
        ),
        .testTarget(
            name: "FormDataKitAFTests",
            dependencies: ["FormDataKitAF", "FormDataKit", "FormDataKitTesting"]
        ),
        .testTarget(
            name: "MigrationExamples",
            dependencies: ["FormDataKit", "FormDataKitAF", "FormDataKitTesting"],
            path: "Migration/Examples"
        ),
    ],
    swiftLanguageModes: [.v6]
)
