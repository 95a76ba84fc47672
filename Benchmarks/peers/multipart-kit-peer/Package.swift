// swift-tools-version:6.0
// A peer for formdata-bench: vapor/multipart-kit's serializer building the W2 and W3 bodies.
// A separate package so FormDataKit and its CI never build SwiftNIO. Build it with
//   swift build -c release --package-path Benchmarks/peers/multipart-kit-peer
// and formdata-bench picks up .build/release/multipart-kit-peer (skipped with a note when absent).
import PackageDescription

let package = Package(
    name: "multipart-kit-peer",
    dependencies: [
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.65.0"),
    ],
    targets: [
        .executableTarget(
            name: "multipart-kit-peer",
            dependencies: [
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
