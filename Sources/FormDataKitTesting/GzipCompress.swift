import CZlib
import Foundation

/// One-shot gzip compression, for the receiver's compressed-response route.
enum GzipCompress {
    /// `data` compressed in the gzip format.
    static func compress(_ data: Data) -> Data {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        guard czlib_deflateInit2(stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK else { return Data() }
        defer { deflateEnd(stream) }
        let capacity = Int(deflateBound(stream, uLong(data.count))) + 32
        var output = Data(count: capacity)
        let produced: Int = data.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: UInt8.self).baseAddress)
                stream.pointee.avail_in = uInt(input.count)
                stream.pointee.next_out = out.bindMemory(to: UInt8.self).baseAddress
                stream.pointee.avail_out = uInt(out.count)
                _ = deflate(stream, Z_FINISH)
                return out.count - Int(stream.pointee.avail_out)
            }
        }
        return output.prefix(produced)
    }
}
