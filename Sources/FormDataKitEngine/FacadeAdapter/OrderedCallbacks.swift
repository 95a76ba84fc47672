import Foundation

/// Where a façade runs its user's code for one send (or one queue, one operation): in the order
/// it was delivered, one at a time, never on a transport's thread. The one way `FormDataRequest`,
/// `NetworkQueue` and FormDataKitAF's managers and operations call delegates, blocks and
/// handlers.
///
/// Three places, chosen when it is made:
/// - a serial mailbox on the shared global queue (no queue or thread is made per send), when
///   there is no callback queue;
/// - the caller's `DispatchQueue` (`FormDataRequest/callbackQueue`): each queue is FIFO, so
///   work delivered in order runs in order;
/// - a waiting thread's `CallbackInbox` (`FormDataRequest/startSynchronous()` called on the
///   callback queue itself, which it would otherwise block).
///
/// Work marked internal (no user code: a queue's bookkeeping, the continuation a waiter resumes)
/// runs right where it is delivered when nothing delivered before it is still waiting, saving a
/// thread hop.
public final class OrderedCallbacks: @unchecked Sendable {
    // `@unchecked`: `usedQueue` is touched only by `deliver` with a queue, whose calls come one
    // at a time there (a send's events are serialized by its driver); the mailbox locks itself,
    // so without a queue `deliver` may be called from several threads at once (a queue's).
    private let queue: DispatchQueue?
    private let inbox: CallbackInbox?
    private let mailbox = SerialMailbox()
    /// Whether work went to `queue` (internal work must then follow it there).
    private var usedQueue = false

    /// Callbacks that run on `queue`, or in a serial mailbox on the shared global queue when it
    /// is nil.
    /// - Parameter queue: the caller's callback queue, or nil.
    public init(queue: DispatchQueue? = nil) {
        self.queue = queue
        self.inbox = nil
    }

    /// Callbacks run by the thread waiting in `inbox`.
    /// - Parameter inbox: the waiting thread's inbox.
    package init(inbox: CallbackInbox) {
        self.queue = nil
        self.inbox = inbox
    }

    /// Runs `work` after everything delivered before it.
    /// - Parameters:
    ///   - internalOnly: `work` calls no user code, so it may run right here when nothing is
    ///     pending (once anything went to the callback queue, it follows it there).
    ///   - work: what to run.
    public func deliver(internalOnly: Bool = false, _ work: @escaping @Sendable () -> Void) {
        if let inbox {
            inbox.post(work)
        } else if let queue, !internalOnly || usedQueue {
            usedQueue = true
            queue.async(execute: work)
        } else if internalOnly {
            mailbox.runHereIfIdle(work)
        } else {
            mailbox.post(work)
        }
    }
}
