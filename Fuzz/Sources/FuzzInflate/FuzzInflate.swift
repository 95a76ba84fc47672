import FormDataKit
import Foundation

/// libFuzzer's driver (linked in by `-sanitize=fuzzer`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// One input through the public decompressor (gzip or zlib, auto-detected). A thrown
/// FormDataError is fine; a crash, trap or sanitizer report is a bug. A successful inflate must
/// round-trip: compressing the output and inflating it again gives the same bytes.
func inflateOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let input = Data(bytes: data, count: size)
    guard let output = try? DataDecompressor.uncompressData(input) else { return 0 }
    if output.count <= 1 << 20 {
        guard let again = try? DataCompressor.compressData(output),
            let back = try? DataDecompressor.uncompressData(again), back == output
        else {
            fatalError("inflate → deflate → inflate changed \(output.count) bytes")
        }
    }
    return 0
}

@_cdecl("FuzzInflate_main")
func fuzzInflateMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in inflateOne(data, size) }
}
