import FormDataKitTesting
import Foundation

/// libFuzzer's driver (linked in by `-sanitize=fuzzer`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// One input as a raw HTTP request capture (what `formdata serve --record` writes and
/// `formdata diff` reads): `RawHTTPRequest(parsing:)`, then `FormSnapshot(capture:)` — the two
/// steps of `FormSnapshot(contentsOfCapture:)` without the file. A thrown FormParseError or
/// FormSnapshotError is fine; a crash, trap or sanitizer report is a bug. Two properties must
/// hold: a parsed capture, serialized again, parses to the same request; a snapshot matches
/// itself exactly.
func parseCaptureOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let input = Data(bytes: data, count: size)
    _ = RawHTTPRequest.looksLikeRequest(input)
    guard let capture = try? RawHTTPRequest(parsing: input) else { return 0 }
    _ = capture.url
    guard let again = try? RawHTTPRequest(parsing: capture.serialized()), again == capture else {
        fatalError("a parsed capture does not parse back from serialized(): \(capture)")
    }
    guard let snapshot = try? FormSnapshot(capture: capture) else { return 0 }
    _ = snapshot.description
    guard snapshot.matches(snapshot, tolerating: .exact) else {
        fatalError("a snapshot does not match itself: \(snapshot)")
    }
    return 0
}

@_cdecl("FuzzCapture_main")
func fuzzCaptureMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in parseCaptureOne(data, size) }
}
