// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FormDataKit",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "FormDataKit", targets: ["FormDataKit"]),
        .library(name: "FormDataKitAF", targets: ["FormDataKitAF"]),
        .library(name: "FormDataKitTesting", targets: ["FormDataKitTesting"]),
        .library(name: "FormDataKitTestingAssertions", targets: ["FormDataKitTestingAssertions"]),
        .library(name: "FormDataKitAsyncHTTPClient", targets: ["FormDataKitAsyncHTTPClient"]),
        .executable(name: "formdata", targets: ["formdata"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .yum(["zlib-devel"]), .brew(["zlib"])]
        ),
        .target(name: "CFileSpace"),
        // libcurl, bound at run time with dlopen: no development package needed to build.
        .target(name: "CCurl"),
        .target(
            name: "FormDataKit",
            dependencies: [
                "CZlib",
                "CFileSpace",
                "CCurl",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "FormDataKitAF",
            dependencies: ["FormDataKit"]
        ),
        .target(
            name: "FormDataKitAsyncHTTPClient",
            dependencies: [
                "FormDataKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The migration kit (receiver, strict parser, snapshots and their comparison): no XCTest
        // or Swift Testing, so the `formdata` tool can link it.
        .target(
            name: "FormDataKitTesting",
            dependencies: [
                "FormDataKit",
                "CZlib",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The migration kit's assertions for XCTest and Swift Testing.
        .target(
            name: "FormDataKitTestingAssertions",
            dependencies: ["FormDataKitTesting"]
        ),
        .executableTarget(
            name: "formdata",
            dependencies: [
                "FormDataKit",
                "FormDataKitAsyncHTTPClient",
                "FormDataKitTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "formdata-bench",
            // formdata-bench-child is an executable, listed so that building formdata-bench builds
            // it too: the driver runs it as a measured child process.
            dependencies: ["FormDataKit", "FormDataKitAsyncHTTPClient", "FormDataKitTesting", "formdata-bench-child"]
        ),
        .executableTarget(
            name: "formdata-bench-child",
            dependencies: ["FormDataKit"]
        ),
        // Test-only helpers shared by the test targets (not a product): child processes
        // (SpawnedProcess, one "start a helper and read its port"), the HTTPS test server and its
        // certificates, and running a test case in a child process (FoundationNetworking's
        // upload-cancel crash must not end the whole test run).
        .target(
            name: "FormDataKitTestSupport",
            dependencies: ["FormDataKit", "FormDataKitTesting"],
            path: "Tests/FormDataKitTestSupport"
        ),
        .testTarget(
            name: "FormDataKitTests",
            dependencies: ["FormDataKit", "FormDataKitAF", "FormDataKitTesting", "FormDataKitTestingAssertions", "FormDataKitTestSupport"],
            exclude: ["Support/parse_form.py", "Transport/Support/form_server.py", "Transport/Support/edge_server.py", "Transport/Support/report_cgi.py"]
        ),
        // The AsyncHTTPClient transport's tests, apart so that the other test targets do not
        // compile SwiftNIO and BoringSSL. The transport-generic suites (sending, lifecycle, raw
        // bodies, redirects) are the core target's files, linked here and run for AsyncHTTPClient
        // only (ASYNC_HTTP_CLIENT_TESTS).
        .testTarget(
            name: "FormDataKitAsyncHTTPClientTests",
            dependencies: [
                "FormDataKit", "FormDataKitAF", "FormDataKitAsyncHTTPClient", "FormDataKitTesting", "FormDataKitTestSupport",
            ],
            exclude: ["Support/edge_server.py"],
            swiftSettings: [.define("ASYNC_HTTP_CLIENT_TESTS")]
        ),
        .executableTarget(
            name: "reliability-helper",
            dependencies: ["FormDataKit"],
            path: "Tests/ReliabilityHelper"
        ),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: ["FormDataKit", "FormDataKitAF", "FormDataKitTesting", "FormDataKitTestSupport"],
            exclude: ["Support/form_oracle.py", "Support/fault_server.py"]
        ),
        .testTarget(
            name: "FormDataKitAFTests",
            dependencies: ["FormDataKitAF", "FormDataKit", "FormDataKitTesting", "FormDataKitTestSupport"]
        ),
        .testTarget(
            name: "MigrationExamples",
            dependencies: ["FormDataKit", "FormDataKitAF", "FormDataKitTesting", "FormDataKitTestingAssertions"],
            path: "Migration/Examples"
        ),
    ],
    swiftLanguageModes: [.v6]
)
