import Foundation

/// The body of one request, handed from the connection's event loop to the thread that handles
/// the request: the event loop appends what NIO decoded, the handler's thread takes it with
/// ``next()``. At most about ``highWater`` bytes wait here; above that the connection stops
/// reading from the socket until the handler has taken them (``onDrained`` asks it to go on), so
/// a request's memory is bounded however fast the client sends and however slowly it is handled.
package final class BodyReader: @unchecked Sendable {
    // `@unchecked`: every mutable property is guarded by `condition`.

    /// Why the body ended before its end.
    struct Broken: Error, CustomStringConvertible {
        var description: String
    }

    /// Bytes waiting above which the connection stops reading: 256 KiB.
    static let highWater = 256 << 10

    private let condition = NSCondition()
    private var chunks: [Data] = []
    private var first = 0
    private var waiting = 0
    private var ended = false
    private var failure: Broken?
    private var paused = false
    private let onDrained: @Sendable () -> Void

    /// A reader whose ``onDrained`` is called (from the handler's thread) when reading stopped
    /// at ``highWater`` and the handler has since taken what waited.
    init(onDrained: @escaping @Sendable () -> Void) {
        self.onDrained = onDrained
    }

    // MARK: - The event loop's side

    /// Adds a piece of the body; whether the connection should stop reading until ``onDrained``.
    func append(_ piece: Data) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !ended, failure == nil, !piece.isEmpty else { return false }
        chunks.append(piece)
        waiting += piece.count
        condition.signal()
        if waiting >= Self.highWater {
            paused = true
        }
        return paused
    }

    /// The body is complete.
    func finish() {
        condition.lock()
        ended = true
        condition.signal()
        condition.unlock()
    }

    /// The body broke off (the client went away, a deadline or a limit passed).
    func fail(_ reason: String) {
        condition.lock()
        if !ended, failure == nil { failure = Broken(description: reason) }
        condition.signal()
        condition.unlock()
    }

    // MARK: - The handler's side

    /// The next piece of the body (at most what one socket read brought, 64 KiB or so), or nil
    /// at its end; waits for the client.
    /// - Returns: the piece, or nil once the body is complete.
    /// - Throws: ``Broken`` when the body broke off.
    package func next() throws -> Data? {
        condition.lock()
        while first == chunks.count, !ended, failure == nil { condition.wait() }
        if first == chunks.count {
            let failure = self.failure
            condition.unlock()
            if let failure { throw failure }
            return nil
        }
        let piece = chunks[first]
        chunks[first] = Data()
        first += 1
        if first == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            first = 0
        }
        waiting -= piece.count
        let resume = paused && waiting < Self.highWater / 2
        if resume { paused = false }
        condition.unlock()
        if resume { onDrained() }
        return piece
    }

    /// Reads and drops the rest of the body.
    /// - Throws: ``Broken`` when the body broke off.
    func drain() throws {
        while try next() != nil {}
    }
}
