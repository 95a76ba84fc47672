import Foundation

// formdata-bench-child: the FormDataKit side of each formdata-bench workload, run by
// `formdata-bench` as a measured child process. It links FormDataKit alone (the driver also
// links SwiftNIO and AsyncHTTPClient for W5), so the peak RSS it reports is FormDataKit's plus the
// Swift runtime's and Foundation's, not the start-up of a larger binary.
//
//   formdata-bench-child spool FILE...                        (W3)
//   formdata-bench-child spool-copy STRATEGY FILE...          (W3 with another copy strategy)
//   formdata-bench-child w1|w2 FIELDS.json ITERATIONS         (W1/W2; prints median seconds and size)
//   formdata-bench-child w4 LEVEL THREADS FILE...             (W4)
//   formdata-bench-child gzip MODE LEVEL ADAPTIVE TYPE THREADS FILE   (W6)
//   formdata-bench-child gzip-request FILE                    (RSS of a large compressed body)
//   formdata-bench-child set-values COUNT                     (setPostValue with COUNT distinct keys)

let usage = "usage: formdata-bench-child spool|spool-copy|w1|w2|w4|gzip|gzip-request|set-values ARGUMENTS..."

func main() throws {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let workload = arguments.first else { throw ChildError.usage(usage) }
    let rest = Array(arguments.dropFirst())
    switch workload {
    case "spool": try SpoolChild.run(files: rest)
    case "spool-copy": try SpoolCopyChild.run(rest)
    case "w1", "w2":
        guard rest.count == 2, let iterations = Int(rest[1]) else { throw ChildError.usage(usage) }
        try FieldsChild.run(workload: workload, fieldsPath: rest[0], iterations: iterations)
    case "w4": try GzipChildren.w4(rest)
    case "gzip": try GzipChildren.part(rest)
    case "gzip-request": try GzipChildren.request(file: rest.first ?? "")
    case "set-values": SetValuesChild.run(count: Int(rest.first ?? "") ?? 100_000)
    default: throw ChildError.usage("unknown workload \(workload)\n\(usage)")
    }
}

/// Why a child failed (printed to standard error; the exit status is 1).
enum ChildError: Error, CustomStringConvertible {
    case failed(String)
    case usage(String)

    var description: String {
        switch self {
        case .failed(let message), .usage(let message): return message
        }
    }
}

do {
    try main()
} catch {
    FileHandle.standardError.write(Data("formdata-bench-child: \(error)\n".utf8))
    exit(1)
}
