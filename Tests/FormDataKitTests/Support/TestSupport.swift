@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import FormDataKitTestSupport
import Testing
@testable import FormDataKit

/// A fixed boundary so tests can assert exact bytes.
let fixedBoundary = "0xKhTmLbOuNdArY-A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D"

/// A URL nobody is sent to.
let anyURL = URL(string: "http://wedontcare.com")!

/// A fresh scratch directory for one test, removed by `cleanup()`.
struct Scratch {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "fdk-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Writes `data` to `name` inside the scratch directory and returns its path.
    @discardableResult
    func write(_ name: String, _ data: Data) throws -> String {
        let file = "\(path)/\(name)"
        try data.write(to: URL(fileURLWithPath: file))
        return file
    }

    func write(_ name: String, _ text: String) throws -> String {
        try write(name, Data(text.utf8))
    }

    func cleanup() { try? FileManager.default.removeItem(atPath: path) }
}

/// The body a built request will send: in memory or read from its spooled file.
func sentBody(_ request: FormDataRequest) throws -> Data {
    if let data = request.postBody { return data }
    if let path = request.postBodyFilePath { return try Data(contentsOf: URL(fileURLWithPath: path)) }
    return Data()
}

/// `text` as UTF-8 bytes.
func bytes(_ text: String) -> Data { Data(text.utf8) }

/// Deterministic pseudo-random bytes.
func randomData(_ count: Int, seed: UInt64) -> Data {
    var state = seed &+ 0x9E37_79B9_7F4A_7C15
    var out = Data(count: count)
    out.withUnsafeMutableBytes { raw in
        let p = raw.bindMemory(to: UInt8.self)
        for i in 0..<count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            p[i] = UInt8(truncatingIfNeeded: state >> 33)
        }
    }
    return out
}

/// Runs a Python script from Tests/FormDataKitTests/Support with `arguments`; returns stdout.
/// The child is waited for on GCD threads (``ChildProcess``), never on the Swift concurrency pool.
func runPython(_ script: String, _ arguments: [String]) async throws -> Data {
    let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    let result = try await ChildProcess.run("/usr/bin/env", ["python3", here.appendingPathComponent(script).path] + arguments)
    guard result.status == 0, !result.signalled else {
        throw PythonFailure(message: String(decoding: result.stderr, as: UTF8.self))
    }
    return result.stdout
}

struct PythonFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { "python failed: \(message)" }
}
