import FormDataKitWire

/// A body read for the thread that sends it, so that thread never waits for a file: what
/// ``CurlTransport``'s read callback reads from. ``BodyReadAhead`` copies the body through two
/// chunks of memory; ``PipeReadAhead`` (Linux) moves it through a pipe, its file parts without a
/// copy; ``CachedPagesReadAhead`` (Linux) copies the files' cached pages on the sending thread
/// itself, handing over to one of the others at the first page that would wait.
///
/// ``read(into:capacity:)`` and ``restart(at:)`` are called on one thread (the transport's, or the
/// caller's driving it); ``cancel()`` from any.
package protocol ReadAheadBody: AnyObject, Sendable {
    /// Starts reading before the first ``read(into:capacity:)`` asks.
    func prefetch()
    /// Copies up to `capacity` bytes that are ready into `buffer`. Never blocks on a file; says
    /// ``BodyReadAhead/ReadResult/wouldBlock`` when nothing is ready yet (the read-ahead's
    /// `onReady` is called once something is).
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> BodyReadAhead.ReadResult
    /// Starts again from byte `offset` of the body (libcurl rewinding for a re-send).
    func restart(at offset: UInt64)
    /// Stops reading: no more `onReady`; a read in progress on a worker finishes and is dropped.
    func cancel()
}

extension BodyReadAhead: ReadAheadBody {}
