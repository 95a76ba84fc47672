import Foundation
import MultipartKit
import NIOCore
import NIOHTTP1

// multipart-kit-peer: vapor/multipart-kit 4.7.1's MultipartSerializer on formdata-bench's workloads.
//
//   multipart-kit-peer w2 FIELDS_JSON ITERATIONS   the fields as multipart, built ITERATIONS times
//   multipart-kit-peer w3 OUT FILE...              ten fields and the files, built once, written to OUT
//
// Prints "<median seconds> <body bytes>", like Benchmarks/peers/py_peers.py. The serializer takes
// each part's body as a ByteBuffer and writes the whole body into one ByteBuffer: for W3 the files
// are read into memory first (that is its API), so its peak RSS is about twice the body.

let boundary = "0xKhTmLbOuNdArY-A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D"

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("multipart-kit-peer: \(message)\n".utf8))
    exit(2)
}

func seconds(since start: UInt64) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func fieldPart(name: String, value: String) -> MultipartPart {
    MultipartPart(headers: HTTPHeaders([("Content-Disposition", "form-data; name=\"\(name)\"")]), body: value)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let workload = arguments.first else { fail("usage: multipart-kit-peer w2 FIELDS_JSON ITERATIONS | w3 OUT FILE...") }
let serializer = MultipartSerializer()

switch workload {
case "w2":
    guard arguments.count == 3, let iterations = Int(arguments[2]), iterations > 0 else { fail("usage: w2 FIELDS_JSON ITERATIONS") }
    guard let data = FileManager.default.contents(atPath: arguments[1]),
          let fields = (try? JSONSerialization.jsonObject(with: data)) as? [[String]]
    else { fail("cannot read \(arguments[1])") }
    var times: [Double] = []
    var size = 0
    for _ in 0..<iterations {
        let start = DispatchTime.now().uptimeNanoseconds
        let parts = fields.map { fieldPart(name: $0[0], value: $0[1]) }
        var buffer = ByteBufferAllocator().buffer(capacity: 0)
        do { try serializer.serialize(parts: parts, boundary: boundary, into: &buffer) } catch { fail("\(error)") }
        size = buffer.readableBytes
        times.append(seconds(since: start))
    }
    print(String(format: "%.9f %d", median(times), size))

case "w3":
    guard arguments.count >= 3 else { fail("usage: w3 OUT FILE...") }
    let start = DispatchTime.now().uptimeNanoseconds
    var parts = (0..<10).map { fieldPart(name: "field\($0)", value: "value \($0) — ünïcödé") }
    for (index, path) in arguments.dropFirst(2).enumerated() {
        guard let contents = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
        let name = (path as NSString).lastPathComponent
        parts.append(MultipartPart(
            headers: HTTPHeaders([
                ("Content-Disposition", "form-data; name=\"file\(index)\"; filename=\"\(name)\""),
                ("Content-Type", "application/octet-stream"),
            ]),
            body: contents))
    }
    var buffer = ByteBufferAllocator().buffer(capacity: 0)
    do { try serializer.serialize(parts: parts, boundary: boundary, into: &buffer) } catch { fail("\(error)") }
    let size = buffer.readableBytes
    guard let out = fopen(arguments[1], "wb") else { fail("cannot create \(arguments[1])") }
    let written = buffer.withUnsafeReadableBytes { fwrite($0.baseAddress, 1, $0.count, out) }
    guard written == size, fclose(out) == 0 else { fail("cannot write \(arguments[1])") }
    print(String(format: "%.9f %d", seconds(since: start), size))

default:
    fail("unknown workload \(workload)")
}
