import FormDataKitTesting
import Foundation

/// libFuzzer's driver (linked in by `-sanitize=fuzzer`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// One input: the first byte picks the content type (multipart with boundary `B`, a quoted
/// boundary, URL-encoded, or a content type taken from the input's first line); the rest is the
/// body. Any thrown FormParseError is fine; a crash, trap or sanitizer report is a bug.
func parseOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let selector = data[0]
    var body = Data(bytes: data + 1, count: size - 1)
    let contentType: String
    switch selector % 4 {
    case 0: contentType = "multipart/form-data; boundary=B"
    case 1: contentType = "multipart/form-data; boundary=\"0xKhTmLbOuNdArY\"; charset=utf-8"
    case 2: contentType = "application/x-www-form-urlencoded"
    default:
        if let newline = body.firstIndex(of: 0x0A) {
            contentType = String(decoding: body[body.startIndex..<newline], as: UTF8.self)
            body = Data(body[(newline + 1)...])
        } else {
            contentType = "multipart/form-data; boundary=B"
        }
    }
    let declared: Int? = selector & 0x80 != 0 ? body.count : nil
    _ = try? FormBodyParser.parse(body, contentType: contentType, expectedLength: declared)
    return 0
}

@_cdecl("FuzzParser_main")
func fuzzParserMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in parseOne(data, size) }
}
