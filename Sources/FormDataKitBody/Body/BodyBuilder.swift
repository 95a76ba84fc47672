import FormDataKitWire
import Foundation

/// Accumulates a body as ``BodySegment``s: text in the form's string encoding, literal bytes,
/// in-memory data and file ranges. Small pieces are coalesced into one in-memory segment; large
/// data and files stay separate segments (no copy). Optionally keeps the ASI-style debug text.
package struct BodyBuilder {
    /// In-memory data up to this size is copied into the coalesced segment.
    static let coalesceLimit = 64 * 1024

    let encoding: String.Encoding
    /// The debug log text, or nil when the debug log is off.
    private(set) var debugText: String?
    /// Fields whose values the debug text shows as ``redactedMarker`` (passwords, tokens).
    var redactedFields: Set<String> = []
    /// What the debug text shows instead of a redacted value.
    static let redactedMarker = "[redacted]"

    private var segments: [BodySegment] = []
    /// The in-memory run being coalesced; handed to a segment without a copy on flush.
    private let pending = ByteAccumulator()

    /// A builder writing strings in `encoding`; `debug` turns the debug text on.
    package init(encoding: String.Encoding, debug: Bool, expectedSize: Int = 0) {
        self.encoding = encoding
        self.debugText = debug ? "" : nil
        pending.reserveCapacity(expectedSize)
    }

    /// The offset in the pending in-memory run where the next byte goes (for ``pendingContains(_:from:)``).
    var pendingMark: Int { pending.count }

    /// Whether `needle` occurs in the pending in-memory bytes from `mark` on.
    func pendingContains(_ needle: [UInt8], from mark: Int) -> Bool {
        pending.withBytes(from: mark) { ByteSearch.contains($0, needle) }
    }

    /// Appends structural ASCII text (boundary lines, CRLFs, fixed header names).
    mutating func appendASCII(_ text: String) {
        appendUTF8(of: text)
        debugText?.append(text)
    }

    /// Appends `text` in the builder's encoding; throws naming `field` and `role` when a
    /// character cannot be represented.
    mutating func appendText(_ text: String, field: String, role: FormDataError.FieldRole) throws(FormDataError) {
        if encoding == .utf8 {
            appendUTF8(of: text)
        } else {
            try IANACharset.encode(text, encoding, field: field, role: role).withUnsafeBytes { pending.append($0) }
        }
        if debugText != nil {
            debugText!.append(role == .value && redactedFields.contains(field) ? Self.redactedMarker : text)
        }
    }

    /// Appends bytes that are already encoded, logging `debugText` for them.
    mutating func appendEncoded(_ bytes: [UInt8], debugText text: @autoclosure () -> String) {
        bytes.withUnsafeBufferPointer { pending.append($0) }
        if debugText != nil { debugText!.append(text()) }
    }

    /// Appends the content of a data part (logged as `[N bytes of data]`).
    mutating func appendData(_ data: Data, partContentType: String?) {
        debugText?.append("[\(data.count) bytes of data]")
        if data.count <= Self.coalesceLimit {
            data.withUnsafeBytes { pending.append($0) }
        } else {
            flush()
            segments.append(BodySegment(.bytes(data), partContentType: partContentType))
        }
    }

    /// Appends the content of a file part (logged as `[N bytes of data from file '<path>']`).
    mutating func appendFile(_ range: FileRange, partContentType: String?) {
        debugText?.append("[\(range.length) bytes of data from file '\(range.path)']")
        flush()
        segments.append(BodySegment(.file(range), partContentType: partContentType))
    }

    /// Appends a stream segment (the debug text shows `[stream of unknown length]` or
    /// `[N bytes of data from a stream]`).
    mutating func appendStream(_ stream: StreamedContent, partContentType: String?) {
        debugText?.append(stream.declaredLength.map { "[\($0) bytes of data from a stream]" } ?? "[stream of unknown length]")
        flush()
        segments.append(BodySegment(.stream(stream), partContentType: partContentType))
    }

    /// Appends `text` to the debug log only.
    mutating func appendDebugOnly(_ text: String) {
        debugText?.append(text)
    }

    /// The finished body.
    package mutating func finish() -> BodySource {
        flush()
        return BodySource(segments: segments)
    }

    /// Appends the UTF-8 bytes of `text` with one copy (contiguous for native strings).
    private mutating func appendUTF8(of text: String) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { pending.append($0) }
        if done == nil { Array(text.utf8).withUnsafeBufferPointer { pending.append($0) } }
    }

    private mutating func flush() {
        guard pending.count > 0 else { return }
        segments.append(BodySegment(.bytes(pending.takeData())))
    }
}
