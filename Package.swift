// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FormDataKit",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "FormDataKit", targets: ["FormDataKit"]),
        .library(name: "FormDataKitAF", targets: ["FormDataKitAF"]),
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
        .target(
            name: "FormDataKitAF",
            dependencies: ["FormDataKit"]
        ),
        .testTarget(
            name: "FormDataKitTests",
            dependencies: ["FormDataKit"]
        ),
        .testTarget(
            name: "FormDataKitAFTests",
            dependencies: ["FormDataKitAF", "FormDataKit"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
