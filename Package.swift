// swift-tools-version:6.1
import PackageDescription

/// The trait that adds `AsyncHTTPClientTransport` (and with it SwiftNIO's TLS, BoringSSL and
/// AsyncHTTPClient). Off by default: `swift build --traits AsyncHTTPClient`, or
/// `.package(url: …, from: …, traits: ["AsyncHTTPClient"])` in a package that depends on this one.
let asyncHTTPClient: Set<String> = ["AsyncHTTPClient"]
/// The trait that builds the ResumableUploadServer test executable (Apple's resumable-upload
/// handler from swift-nio-extras) and runs the resumable-upload interop tests against it. Off by
/// default: swift-nio-extras resolves twelve more packages (NIOSSL, swift-crypto, HTTP/2…) that
/// no product uses. `swift test --traits ResumableUploadServer`; CI runs it.
let resumableUploadServer: Set<String> = ["ResumableUploadServer"]

let package = Package(
    name: "FormDataKit",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "FormDataKit", targets: ["FormDataKit"]),
        .library(name: "FormDataKitAF", targets: ["FormDataKitAF"]),
        .library(name: "FormDataKitTesting", targets: ["FormDataKitTesting"]),
        .library(name: "FormDataKitTestingAssertions", targets: ["FormDataKitTestingAssertions"]),
        // Empty unless the AsyncHTTPClient trait is on.
        .library(name: "FormDataKitAsyncHTTPClient", targets: ["FormDataKitAsyncHTTPClient"]),
        .executable(name: "formdata", targets: ["formdata"]),
    ],
    traits: [
        .trait(
            name: "AsyncHTTPClient",
            description: "AsyncHTTPClientTransport (FormDataKitAsyncHTTPClient), the formdata tool's --transport asynchttpclient "
                + "and the benchmark's AsyncHTTPClient rows; compiles SwiftNIO's TLS, BoringSSL and AsyncHTTPClient"
        ),
        .trait(
            name: "ResumableUploadServer",
            description: "The resumable-upload interop tests' server (swift-nio-extras' NIOResumableUpload); test-only, "
                + "resolves swift-nio-extras and its dependencies"
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The migration kit's receiver (FormDataKitTesting, `formdata serve`/`demo`).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        // Apple's resumable-upload server handler (NIOResumableUpload), for the test-support
        // server the resumable-upload tests send to; no shipped product uses it. Resolved only
        // with the ResumableUploadServer trait.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // HTTP/2 for that server (`--h2c`: resumable uploads over h2); also resolved only with the trait.
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        // Resolved only with the AsyncHTTPClient trait (no target uses them otherwise).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // `swift package generate-documentation` (the DocC catalogs); a command plugin, built
        // only when documentation is generated.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
        // The layers of the FormDataKit product, bottom up; each depends only on those below it,
        // so an upward reference does not build (../shared/DESIGN.md). FormDataKit re-exports them.
        // The wire vocabulary: request and response heads, network options, TLS trust, header and
        // origin rules, charsets, errors, what a body is (segments), the transport protocol.
        .target(name: "FormDataKitWire"),
        // The body engine: forms, encoders, compression, and the files layer (the file owner and
        // the body reader).
        .target(name: "FormDataKitBody", dependencies: ["FormDataKitWire", "CZlib", "CFileSpace"]),
        // The sending engine: delivery, the send driver and its state machines, the transports.
        .target(name: "FormDataKitEngine", dependencies: ["FormDataKitBody", "FormDataKitWire", "CCurl", "CFileSpace"]),
        // The ASI façade (FormDataRequest, NetworkQueue), re-exporting the layers below.
        .target(
            name: "FormDataKit",
            dependencies: [
                "FormDataKitEngine",
                "FormDataKitBody",
                "FormDataKitWire",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "FormDataKitAF",
            dependencies: ["FormDataKit"]
        ),
        // Its sources are inside `#if AsyncHTTPClient`: without the trait it is an empty module
        // and none of these dependencies is resolved or built.
        .target(
            name: "FormDataKitAsyncHTTPClient",
            dependencies: [
                "FormDataKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: asyncHTTPClient)),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: asyncHTTPClient)),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: asyncHTTPClient)),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: asyncHTTPClient)),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: asyncHTTPClient)),
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
                .target(name: "FormDataKitAsyncHTTPClient", condition: .when(traits: asyncHTTPClient)),
                "FormDataKitTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "formdata-bench",
            // formdata-bench-child is an executable, listed so that building formdata-bench builds
            // it too: the driver runs it as a measured child process. So is ResumableUploadServer
            // with its trait: the `resume` workload sends to it (without the trait, not built).
            dependencies: [
                "FormDataKit", "FormDataKitAF",
                .target(name: "FormDataKitAsyncHTTPClient", condition: .when(traits: asyncHTTPClient)),
                "FormDataKitTesting", "formdata-bench-child",
                .target(name: "ResumableUploadServer", condition: .when(traits: resumableUploadServer)),
            ]
        ),
        .executableTarget(
            name: "formdata-bench-child",
            dependencies: ["FormDataKit"]
        ),
        // Test-only helpers shared by the test targets (not a product): child processes
        // (SpawnedProcess, one "start a helper and read its port", the built `formdata` tool), the
        // HTTPS test server and its certificates, and running a test case in a child process
        // (FoundationNetworking's upload-cancel crash must not end the whole test run).
        .target(
            name: "FormDataKitTestSupport",
            dependencies: ["FormDataKit", "FormDataKitTesting"],
            path: "Tests/FormDataKitTestSupport"
        ),
        // The library's tests, the transport suites among them: each runs over every transport
        // this build has (`TransportKind.allCases`: curl and URLSession, and AsyncHTTPClient with
        // the trait, whose own suites are in Transport/AsyncHTTPClient).
        .testTarget(
            name: "FormDataKitTests",
            dependencies: [
                "FormDataKit", "FormDataKitAF", "FormDataKitTesting", "FormDataKitTestingAssertions", "FormDataKitTestSupport",
                "FormDataKitWire", "FormDataKitBody", "FormDataKitEngine",
                .target(name: "FormDataKitAsyncHTTPClient", condition: .when(traits: asyncHTTPClient)),
            ],
            exclude: [
                "Support/parse_form.py", "Transport/Support/form_server.py", "Transport/Support/edge_server.py",
                "Transport/Support/report_cgi.py", "Transport/Support/origin_pair_server.py",
                "Transport/Support/closing_keepalive_server.py", "Streams/stream_server.py", "Streams/stream_server.go",
                "HTTP2/refusing_h2c_server.py",
            ]
        ),
        // The migration kit's tests: the receiver (framing, limits, hardening), snapshots and
        // their comparison, the assertions. A few run `formdata serve`/`diff`, so the tool is built.
        .testTarget(
            name: "FormDataKitTestingTests",
            dependencies: ["FormDataKit", "FormDataKitTesting", "FormDataKitTestingAssertions", "FormDataKitTestSupport", "formdata"]
        ),
        // The `formdata` tool's tests, run as a user runs it (a child process).
        .testTarget(
            name: "FormDataKitCLITests",
            dependencies: [
                "FormDataKit", "FormDataKitTesting", "FormDataKitTestingAssertions", "FormDataKitTestSupport", "formdata",
                "FormDataKitWire", "FormDataKitBody", "FormDataKitEngine",
            ]
        ),
        .executableTarget(
            name: "reliability-helper",
            dependencies: ["FormDataKit", .target(name: "FormDataKitAsyncHTTPClient", condition: .when(traits: asyncHTTPClient))],
            path: "Tests/ReliabilityHelper"
        ),
        // Apple's HTTPResumableUploadHandler in front of a handler that records each completed
        // upload (its sha256, by coreutils): the independent server of the resumable-upload tests.
        // Not a product. Without the ResumableUploadServer trait it only says so and exits.
        .executableTarget(
            name: "ResumableUploadServer",
            dependencies: [
                .product(name: "NIOResumableUpload", package: "swift-nio-extras", condition: .when(traits: resumableUploadServer)),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: resumableUploadServer)),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: resumableUploadServer)),
                .product(name: "NIOHTTPTypesHTTP2", package: "swift-nio-extras", condition: .when(traits: resumableUploadServer)),
                .product(name: "NIOHTTP2", package: "swift-nio-http2", condition: .when(traits: resumableUploadServer)),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: resumableUploadServer)),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: resumableUploadServer)),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: resumableUploadServer)),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: resumableUploadServer)),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: resumableUploadServer)),
            ],
            path: "Tests/ResumableUploadServer"
        ),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "FormDataKit", "FormDataKitAF", "FormDataKitTesting", "FormDataKitTestSupport", "FormDataKitWire", "FormDataKitBody",
                "FormDataKitEngine",
            ],
            exclude: [
                "Support/form_oracle.py", "Support/fault_server.py", "Support/cutting_relay.py", "Support/cutting_relay_check.py",
            ]
        ),
        .testTarget(
            name: "FormDataKitAFTests",
            dependencies: [
                "FormDataKitAF", "FormDataKit", "FormDataKitTesting", "FormDataKitTestSupport", "FormDataKitWire", "FormDataKitBody",
                "FormDataKitEngine",
            ]
        ),
        .testTarget(
            name: "MigrationExamples",
            dependencies: ["FormDataKit", "FormDataKitAF", "FormDataKitTesting", "FormDataKitTestingAssertions"],
            path: "Migration/Examples"
        ),
    ],
    swiftLanguageModes: [.v6]
)
