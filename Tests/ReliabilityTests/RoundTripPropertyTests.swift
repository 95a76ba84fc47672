import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
import FormDataKitTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Property-based round trips: random hostile forms built by both façades (FormDataRequest and
/// AFHTTPRequestSerializer's multipart), gzip on or off, parsed by three independent parsers
/// (Werkzeug, Python's `email` package, FormDataKitTesting's FormBodyParser). Every field and
/// file must come back identical, names as the WHATWG escaping leaves them.
///
/// CI runs 300 cases (600 bodies); `FORMDATAKIT_LONG=1` runs 10,000. `FORMDATAKIT_SEED=N`
/// starts from another seed. A failure names the case's seed.
extension Reliability {
    @Suite("Property round trips")
    struct RoundTripPropertyTests {
        /// One field or file as every parser reports it: name, then value bytes as hex, or file
        /// name, content type, size and sha256.
        struct Row: Equatable, Sendable, CustomStringConvertible {
            var cells: [String]
            var description: String { cells.map(\.debugDescription).joined(separator: " ") }
        }

        struct Expected: Sendable {
            var fields: [Row]
            var files: [Row]
        }

        /// `rows` grouped by name in the order each name first appears: how Werkzeug's MultiDict
        /// lists repeated names (`items(multi=True)`).
        static func groupedByName(_ rows: [Row]) -> [Row] {
            var order: [String] = []
            var groups: [String: [Row]] = [:]
            for row in rows {
                if groups[row.cells[0]] == nil { order.append(row.cells[0]) }
                groups[row.cells[0], default: []].append(row)
            }
            return order.flatMap { groups[$0]! }
        }

        static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

        static func expected(_ form: GeneratedForm, names: (String) -> String) -> Expected {
            Expected(
                fields: form.values.map { Row(cells: [names($0.name), hex(Data($0.value.utf8))]) },
                files: form.files.map {
                    Row(cells: [names($0.name), names($0.fileName), $0.contentType, "\($0.data.count)", SHA256.hex($0.data)])
                })
        }

        /// A built body: where its bytes are, its headers.
        struct Built: Sendable {
            var path: String
            var contentType: String
            var gzip: Bool
        }

        // MARK: - Building with each façade

        static func buildASI(_ form: GeneratedForm, files: [String?], scratch: String) throws -> (FormDataRequest, Built) {
            let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
            request.postFormat = .multipartFormData
            request.shouldCompressRequestBody = form.gzip
            for value in form.values { request.addPostValue(value.value, forKey: value.name) }
            for (file, path) in zip(form.files, files) {
                if let path {
                    try request.addFile(path, withFileName: file.fileName, andContentType: file.contentType, forKey: file.name)
                } else {
                    request.addData(file.data, withFileName: file.fileName, andContentType: file.contentType, forKey: file.name)
                }
            }
            try request.buildPostBody()
            var path = request.compressedPostBodyFilePath ?? request.postBodyFilePath
            if path == nil {
                path = scratch + "/asi-body"
                try (request.compressedPostBody ?? request.postBody ?? Data()).write(to: URL(fileURLWithPath: path!))
            }
            let size = try FileManager.default.attributesOfItem(atPath: path!)[.size] as? UInt64
            guard request.requestHeaders["Content-Length"] == size.map(String.init) else {
                throw PythonOracle.Failure(
                    description: "ASI Content-Length \(request.requestHeaders["Content-Length"] ?? "nil") for a body of \(size ?? 0)")
            }
            return (request, Built(path: path!, contentType: request.requestHeaders["Content-Type"] ?? "", gzip: form.gzip))
        }

        static func buildAF(_ form: GeneratedForm, files: [String?], scratch: String) throws -> Built {
            let serializer = AFHTTPRequestSerializer.serializer()
            let request = try serializer.multipartFormRequest(
                withMethod: "POST", urlString: "http://127.0.0.1:9/upload", parameters: nil
            ) { multipart in
                for value in form.values { multipart.appendPart(withForm: Data(value.value.utf8), name: value.name) }
                for (file, path) in zip(form.files, files) {
                    if let path {
                        try multipart.appendPart(
                            withFileURL: URL(fileURLWithPath: path), name: file.name, fileName: file.fileName, mimeType: file.contentType)
                    } else {
                        multipart.appendPart(withFileData: file.data, name: file.name, fileName: file.fileName, mimeType: file.contentType)
                    }
                }
            }
            guard let stream = request.httpBodyStream as? AFMultipartBodyStream else {
                throw PythonOracle.Failure(description: "AF request without a multipart body stream")
            }
            var body = try stream.bodySource.readAll()
            guard request.value(forHTTPHeaderField: "Content-Length") == String(body.count) else {
                throw PythonOracle.Failure(
                    description:
                        "AF Content-Length \(request.value(forHTTPHeaderField: "Content-Length") ?? "nil") for a body of \(body.count)")
            }
            if form.gzip { body = try DataCompressor.compressData(body) }
            let path = scratch + "/af-body"
            try body.write(to: URL(fileURLWithPath: path))
            return Built(path: path, contentType: request.value(forHTTPHeaderField: "Content-Type") ?? "", gzip: form.gzip)
        }

        // MARK: - Checking

        /// Differences between what `parser` reported and what was sent, as readable lines.
        static func compare(_ parser: String, fields: [Row], files: [Row], with expected: Expected) -> [String] {
            var problems: [String] = []
            if fields != expected.fields {
                problems.append("\(parser) fields \(fields) != expected \(expected.fields)")
            }
            if files != expected.files {
                problems.append("\(parser) files \(files) != expected \(expected.files)")
            }
            return problems
        }

        static func rows(_ result: PythonOracle.Result, parser: String) -> ([Row], [Row], String?) {
            if let error = result.error { return ([], [], "\(parser) failed: \(error)") }
            let fields = (result.fields ?? []).map { Row(cells: $0) }
            let files = (result.files ?? []).map {
                Row(
                    cells: $0.map { item -> String in
                        switch item {
                        case .text(let text): return text
                        case .number(let n): return "\(n)"
                        case .null: return "<none>"
                        }
                    })
            }
            return (fields, files, nil)
        }

        static func check(_ built: Built, form: GeneratedForm) async throws -> [String] {
            // FormDataKitTesting's strict parser (off the concurrency pool: CPU-heavy in debug builds).
            var problems: [String] = try await offPool {
                var body = try Data(contentsOf: URL(fileURLWithPath: built.path))
                if built.gzip { body = try DataDecompressor.uncompressData(body) }
                do {
                    let parsed = try FormBodyParser.parse(body, contentType: built.contentType)
                    return compare(
                        "FormBodyParser",
                        fields: parsed.fields.map { Row(cells: [$0.name, hex(Data($0.value.utf8))]) },
                        files: parsed.files.map {
                            Row(cells: [$0.name, $0.fileName, $0.contentType ?? "<none>", "\($0.size)", $0.sha256])
                        },
                        with: expected(form, names: wireEscaped))
                } catch {
                    return ["FormBodyParser failed: \(error)"]
                }
            }
            // Werkzeug and email, in the shared Python process.
            let answer = try await PythonOracle.shared.parse(path: built.path, contentType: built.contentType, gzip: built.gzip)
            let (wFields, wFiles, wError) = rows(answer.werkzeug, parser: "werkzeug")
            if let wError {
                problems.append(wError)
            } else {
                var grouped = expected(form, names: werkzeugSees)
                grouped.fields = groupedByName(grouped.fields)
                grouped.files = groupedByName(grouped.files)
                problems += compare("werkzeug", fields: wFields, files: wFiles, with: grouped)
            }
            let (eFields, eFiles, eError) = rows(answer.email, parser: "email")
            if let eError {
                problems.append(eError)
            } else {
                problems += compare("email", fields: eFields, files: eFiles, with: expected(form, names: wireEscaped))
            }
            return problems
        }

        @Test("A value or name that starts with U+FEFF keeps it (FormBodyParser used to drop it)")
        func byteOrderMarkKept() throws {
            let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/upload")!)
            request.postFormat = .multipartFormData
            request.addPostValue("\u{FEFF}value", forKey: "\u{FEFF}name")
            try request.buildPostBody()
            let parsed = try FormBodyParser.parse(
                try #require(request.postBody), contentType: try #require(request.requestHeaders["Content-Type"]))
            #expect(parsed.fields == [ParsedField(name: "\u{FEFF}name", value: "\u{FEFF}value")])
        }

        @Test("Random hostile forms round-trip through Werkzeug, email and FormBodyParser")
        func randomForms() async throws {
            let cases = longRun ? 10_000 : 300
            let baseSeed = ProcessInfo.processInfo.environment["FORMDATAKIT_SEED"].flatMap { UInt64($0) } ?? 0x5EED_F0F0
            let scratch = NSTemporaryDirectory() + "fdk-property-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            var failures: [String] = []
            var bodies = 0
            var gzipped = 0
            var fileParts = 0
            var valueParts = 0
            for index in 0..<cases {
                let seed = baseSeed &+ UInt64(index)
                let largeFiles = index % (longRun ? 10 : 60) == 0
                let form = try await offPool { GeneratedForm.make(seed: seed, largeFiles: largeFiles) }
                do {
                    let paths: [String?] = try await offPool {
                        try form.files.enumerated().map { number, file -> String? in
                            guard file.onDisk else { return nil }
                            let path = scratch + "/file-\(number)"
                            try file.data.write(to: URL(fileURLWithPath: path))
                            return path
                        }
                    }
                    let (request, asi) = try await offPool { try Self.buildASI(form, files: paths, scratch: scratch) }
                    for problem in try await Self.check(asi, form: form) { failures.append("seed \(seed) ASI: \(problem)") }
                    withExtendedLifetime(request) {}
                    let af = try await offPool { try Self.buildAF(form, files: paths, scratch: scratch) }
                    for problem in try await Self.check(af, form: form) { failures.append("seed \(seed) AF: \(problem)") }
                } catch {
                    failures.append("seed \(seed): \(error)")
                }
                bodies += 2
                if form.gzip { gzipped += 2 }
                fileParts += form.files.count * 2
                valueParts += form.values.count * 2
                if failures.count > 20 { break }
            }
            print(
                "property round trips: \(cases) cases, \(bodies) bodies (\(gzipped) gzip), \(valueParts) value parts, \(fileParts) file parts, 3 parsers each, \(failures.count) mismatches"
            )
            #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
        }
    }
}
