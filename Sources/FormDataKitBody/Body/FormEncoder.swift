#if canImport(Glibc)
import FormDataKitWire
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A form encoded into a body: the bytes (as segments) and the `Content-Type` that describes them.
package struct EncodedBody: Sendable {
    package var source: BodySource
    package var contentType: String
    /// The ASI-style debug log text, when asked for.
    package var debugText: String?
    /// The multipart boundary used, for multipart bodies.
    package var boundary: String?
}

/// Encodes a ``Form`` with ASIFormDataRequest's byte rules: URL-encoded pairs, or a multipart
/// body with all value parts before all file parts.
package enum FormEncoder {
    /// The ASI debug log markers.
    enum DebugMarker {
        static let multipartStart = "\r\n==== Building a multipart/form-data body ====\r\n"
        static let multipartEnd = "==== End of multipart/form-data body ====\r\n"
        static let urlEncodedStart = "\r\n==== Building an application/x-www-form-urlencoded body ====\r\n"
        static let urlEncodedEnd = "\r\n==== End of application/x-www-form-urlencoded body ====\r\n"
    }

    /// `name=value` pairs joined by `&`, each side escaped (only `A–Z a–z 0–9 - . _` kept).
    /// `redacting`: fields whose values the debug text shows as `[redacted]`.
    package static func urlEncoded(
        _ form: Form, encoding: String.Encoding, debug: Bool, redacting: Set<String> = []
    ) throws(FormDataError) -> EncodedBody {
        try IANACharset.requireUsable(encoding)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(form.values.reduce(0) { $0 + ($1.name.utf8.count + $1.value.utf8.count) * 3 + 2 })
        for (index, field) in form.values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "&")) }
            try URLFormEncoding.appendEscaped(field.name, encoding: encoding, field: field.name, role: .name, to: &bytes)
            bytes.append(UInt8(ascii: "="))
            try URLFormEncoding.appendEscaped(field.value, encoding: encoding, field: field.name, role: .value, to: &bytes)
        }
        var builder = BodyBuilder(encoding: encoding, debug: debug)
        builder.appendDebugOnly(DebugMarker.urlEncodedStart)
        builder.appendEncoded(
            bytes,
            debugText: redacting.isEmpty
                ? String(decoding: bytes, as: UTF8.self) : Self.redactedURLEncodedText(form, encoding: encoding, redacting: redacting))
        builder.appendDebugOnly(DebugMarker.urlEncodedEnd)
        return EncodedBody(
            source: builder.finish(),
            contentType: "application/x-www-form-urlencoded; charset=\(IANACharset.name(for: encoding)!)",
            debugText: builder.debugText, boundary: nil)
    }

    /// The multipart body with `boundary`. When the boundary occurs in in-memory content, a new
    /// one is generated if `regenerateOnCollision`, otherwise that is an error.
    ///
    /// Without `regenerateOnCollision` the boundary is the caller's (fixed, perhaps guessable), so
    /// file parts are read once now and checked for it too, in chunks with bounded memory (see
    /// ``MultipartWriter``): a file that contains it is
    /// ``FormDataError/boundaryCollision(boundary:field:)`` naming the file's field, before any
    /// temporary file is made. A generated boundary (122 random bits) is not checked against
    /// files: the chance of a collision is negligible, and the default path reads no file here.
    package static func multipart(
        _ form: Form, encoding: String.Encoding, boundary: String, regenerateOnCollision: Bool, debug: Bool,
        redacting: Set<String> = []
    ) throws(FormDataError) -> EncodedBody {
        // A file deleted, truncated or grown since it was added fails the build: nothing is sent.
        let fileSizes = try checkedFileSizes(form)
        try IANACharset.requireUsable(encoding)
        let parts = try multipartParts(form, encoding: encoding, fileSizes: fileSizes)
        var (builder, chosen) = try MultipartWriter.write(
            parts, boundary: boundary, fixed: !regenerateOnCollision, style: .asi
        ) { boundary in
            var builder = BodyBuilder(encoding: encoding, debug: debug, expectedSize: estimatedInMemorySize(form, boundary: boundary))
            builder.redactedFields = redacting
            builder.appendDebugOnly(DebugMarker.multipartStart)
            return builder
        }
        builder.appendDebugOnly(DebugMarker.multipartEnd)
        return EncodedBody(
            source: builder.finish(),
            contentType: "multipart/form-data; charset=\(IANACharset.name(for: encoding)!); boundary=\(chosen)",
            debugText: builder.debugText, boundary: chosen)
    }

    /// Roughly how many in-memory bytes a multipart body of `form` has (to reserve once).
    /// The URL-encoded pairs as the debug log shows them with the values of `redacting` hidden
    /// (only built when the log is on and something is redacted).
    private static func redactedURLEncodedText(_ form: Form, encoding: String.Encoding, redacting: Set<String>) -> String {
        var bytes: [UInt8] = []
        for (index, field) in form.values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "&")) }
            try? URLFormEncoding.appendEscaped(field.name, encoding: encoding, field: field.name, role: .name, to: &bytes)
            bytes.append(UInt8(ascii: "="))
            if redacting.contains(field.name) {
                bytes.append(contentsOf: BodyBuilder.redactedMarker.utf8)
            } else {
                try? URLFormEncoding.appendEscaped(field.value, encoding: encoding, field: field.name, role: .value, to: &bytes)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func estimatedInMemorySize(_ form: Form, boundary: String) -> Int {
        let perPart = boundary.utf8.count + 120
        let values = form.values.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + perPart }
        return values + form.files.count * (perPart + 64) + boundary.utf8.count + 8
    }

    /// The size of each of `form`'s file fields' files, in order (nil for a data field), read now
    /// so the body length is exact: missing files, directories and files that are not regular
    /// files are errors, and so is a size other than ``FormFileField/sizeWhenAdded``.
    static func checkedFileSizes(_ form: Form) throws(FormDataError) -> [UInt64?] {
        var sizes: [UInt64?] = []
        sizes.reserveCapacity(form.files.count)
        for field in form.files {
            guard case .file(let path) = field.content else {
                sizes.append(nil)
                continue
            }
            // Checked in full when added (a kernel file system's file and an unreadable one are
            // refused there); each read opens the file and checks it in full again, so the build
            // leaves out the statfs and the access.
            let size = try FileInspection.regularFileSize(at: path, inFull: field.sizeWhenAdded == nil)
            if let expected = field.sizeWhenAdded, size != expected {
                throw .fileChanged(path: path, expectedSize: expected, actualSize: size)
            }
            sizes.append(size)
        }
        return sizes
    }

    /// The parts of `form`: every value field, then every file field (ASI's order), the files'
    /// sizes from ``checkedFileSizes(_:)``.
    static func multipartParts(_ form: Form, encoding: String.Encoding, fileSizes: [UInt64?]) throws(FormDataError) -> [MultipartPart] {
        var parts: [MultipartPart] = []
        parts.reserveCapacity(form.values.count + form.files.count)
        for field in form.values {
            parts.append(.value(name: field.name, content: .text(field.value)))
        }
        for (field, knownSize) in zip(form.files, fileSizes) {
            try IANACharset.requireEncodable(field.name, encoding, field: field.name, role: .name)
            try IANACharset.requireEncodable(field.fileName, encoding, field: field.name, role: .fileName)
            try HeaderParameterEscaping.requireSafeHeaderValue(field.contentType, field: field.name)
            try IANACharset.requireEncodable(field.contentType, encoding, field: field.name, role: .contentType)
            let content: MultipartPart.Content
            switch field.content {
            case .data(let data):
                content = .data(data)
            case .stream(let stream):
                content = .stream(stream)
            case .file(let path):
                let size = knownSize ?? 0
                content = .file(FileRange(path: path, length: size, expectedFileSize: size))
            }
            parts.append(.file(name: field.name, fileName: field.fileName, contentType: field.contentType, content: content))
        }
        return parts
    }
}
