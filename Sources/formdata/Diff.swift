import ArgumentParser
import FormDataKitTesting
import Foundation

/// `formdata diff A B`: compare two captured requests field by field.
struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two captured requests field by field; exit status 0 when they are equivalent, 1 when they differ.",
        discussion: """
            A and B are raw HTTP request files (what `formdata serve --record DIR` writes: request \
            line, headers, body), or bare bodies when --content-type is given. By default only the \
            multipart boundary may differ; --tolerate adds more (boundary, part-order, charset, \
            header-case, host, all), --exact allows nothing. host lets the URL's scheme, host and \
            port differ (captures from receivers on different ports); its path and query still \
            compare. Text is shown in the charset the body declares; the bytes are compared.
            """)

    @Argument(help: "The first capture (raw HTTP request file, or a body with --content-type).")
    var a: String

    @Argument(help: "The second capture.")
    var b: String

    @Option(name: .long, help: "The Content-Type of bare body files (both, unless --content-type-b is given).")
    var contentType: String?

    @Option(name: .long, help: "The Content-Type of B when it is a bare body with a different boundary.")
    var contentTypeB: String?

    @Option(name: .long, help: "The Content-Encoding of bare body files (e.g. gzip).")
    var contentEncoding: String?

    @Option(
        name: .long,
        help: "What may differ: boundary, part-order, charset, header-case, host, all (comma-separated or repeated).")
    var tolerate: [String] = []

    @Flag(name: .long, help: "Compare everything, the boundary included.")
    var exact = false

    @Flag(name: .long, help: "Also print both snapshots.")
    var verbose = false

    func run() throws {
        var tolerance: FormSnapshotTolerance = exact ? .exact : .default
        for name in tolerate.flatMap({ $0.split(separator: ",").map(String.init) }) {
            guard let named = FormSnapshotTolerance(name: name.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError(
                    "Unknown tolerance \(name.debugDescription): use boundary, part-order, charset, header-case, host or all")
            }
            tolerance.formUnion(named)
        }
        let left = try snapshot(a, contentType: contentType)
        let right = try snapshot(b, contentType: contentTypeB ?? contentType)
        if verbose { print("A:\n\(left)\n\nB:\n\(right)\n") }
        let report = left.diffReport(against: right, tolerating: tolerance, labels: ("A", "B"))
        print(report)
        guard report != "equivalent" else { return }
        let names: [(String, FormSnapshotTolerance)] = [
            ("boundary", .boundary), ("part-order", .partOrder), ("charset", .charsetParameter), ("header-case", .headerCase),
            ("host", .host),
        ]
        let helpful = names.filter { !tolerance.contains($0.1) }.map(\.0)
        if !helpful.isEmpty, left.matches(right, tolerating: tolerance.union(.all)) {
            let needed = names.filter {
                !tolerance.contains($0.1) && !left.matches(right, tolerating: tolerance.union(.all).subtracting($0.1))
            }
            print("(equivalent with --tolerate \(needed.map(\.0).joined(separator: ",")))")
        }
        throw ExitCode(1)
    }

    private func snapshot(_ path: String, contentType: String?) throws -> FormSnapshot {
        let url = URL(fileURLWithPath: path)
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ValidationError("Cannot read \(path): \(error.localizedDescription)")
        }
        do {
            if RawHTTPRequest.looksLikeRequest(data) {
                let capture: RawHTTPRequest
                do { capture = try RawHTTPRequest(parsing: data) } catch { throw FormSnapshotError.malformedCapture(path: path, error) }
                return try FormSnapshot(capture: capture)
            }
            guard let contentType else {
                throw ValidationError("\(path) is not a raw HTTP request; give its --content-type to compare it as a body")
            }
            return try FormSnapshot(body: data, contentType: contentType, contentEncoding: contentEncoding)
        } catch let error as FormSnapshotError {
            throw ValidationError("\(path): \(error)")
        }
    }
}
