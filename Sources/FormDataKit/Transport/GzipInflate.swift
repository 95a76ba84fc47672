import CZlib
import Foundation

/// One-shot gzip inflation of a response body held in memory.
enum GzipInflate {
    /// The largest inflated body accepted (a guard against decompression bombs): 1 GiB.
    static let outputLimit = 1 << 30

    /// `data` inflated (gzip or zlib wrapper, detected); concatenated gzip members are joined.
    static func inflate(_ data: Data) -> Result<Data, FormDataError> {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        var code = czlib_inflateInit2(stream, 15 + 32)
        guard code == Z_OK else { return .failure(.decompressionFailed(code: code, message: "inflateInit2")) }
        var output = Data()
        let chunk = 64 * 1024
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer { buffer.deallocate() }
        return data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Result<Data, FormDataError> in
            guard let base = input.bindMemory(to: UInt8.self).baseAddress else { return .success(Data()) }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base)
            stream.pointee.avail_in = uInt(input.count)
            while true {
                stream.pointee.next_out = buffer
                stream.pointee.avail_out = uInt(chunk)
                code = CZlib.inflate(stream, Z_NO_FLUSH)
                let produced = chunk - Int(stream.pointee.avail_out)
                output.append(buffer, count: produced)
                if output.count > outputLimit {
                    return .failure(.decompressionFailed(code: Z_BUF_ERROR, message: "inflated body exceeds \(outputLimit) bytes"))
                }
                if code == Z_STREAM_END {
                    if stream.pointee.avail_in == 0 { return .success(output) }
                    // Another gzip member follows.
                    code = inflateReset(stream)
                    if code != Z_OK { return .failure(.decompressionFailed(code: code, message: "inflateReset")) }
                    continue
                }
                if code != Z_OK {
                    let message = stream.pointee.msg.map { String(cString: $0) } ?? ""
                    return .failure(.decompressionFailed(code: code, message: message))
                }
                if stream.pointee.avail_in == 0 && produced == 0 {
                    return .failure(.decompressionFailed(code: Z_DATA_ERROR, message: "truncated compressed data"))
                }
            }
        }
    }
}
