import FormDataKitBody
import FormDataKitWire
import Foundation

/// The process's one timer for sends: every send's idle clock is a deadline here.
///
/// Deadlines wait in a min-heap under one lock; one `asyncAfter` on one queue is armed for the
/// earliest of them only. A send's deadline is almost always later than those already waiting
/// (every send of a process tends to have the same timeout), so scheduling one costs a heap
/// insert and no wake-up of another thread; a finished send cancels its deadline, which is then
/// skipped (and the heap compacted when most of it is cancelled). Work runs on the timer queue.
enum SendTimer {
    /// A scheduled deadline, to cancel it.
    struct Token: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    /// Monotonic nanoseconds now (the clock deadlines are given in).
    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    private static let deadlines = DeadlineHeap()

    /// Runs `work` at `deadline` (monotonic nanoseconds) on the timer queue, unless cancelled first.
    /// - Parameters:
    ///   - deadline: when, in ``now``'s clock.
    ///   - work: what to run; it returns quickly.
    /// - Returns: the token that cancels it.
    @discardableResult
    static func schedule(at deadline: UInt64, _ work: @escaping @Sendable () -> Void) -> Token {
        deadlines.schedule(at: deadline, work)
    }

    /// Drops the deadline of `token` (nothing happens when it already ran).
    static func cancel(_ token: Token) {
        deadlines.cancel(token)
    }
}

/// ``SendTimer``'s deadlines: a min-heap by deadline, the live ones' work by id.
private final class DeadlineHeap: @unchecked Sendable {
    // `@unchecked`: every stored variable is touched only under `lock`.
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
    }

    private let queue = DispatchQueue(label: "FormDataKit.SendTimer")
    private let lock = Locked()
    private var heap: [Entry] = []
    private var work: [UInt64: @Sendable () -> Void] = [:]
    private var nextID: UInt64 = 0
    /// The deadline the queue will wake for next (nil: none armed).
    private var armed: UInt64?

    func schedule(at deadline: UInt64, _ item: @escaping @Sendable () -> Void) -> SendTimer.Token {
        let (id, arm) = lock.withLock { () -> (UInt64, Bool) in
            nextID += 1
            work[nextID] = item
            push(Entry(deadline: deadline, id: nextID))
            compactIfMostlyCancelled()
            guard armed.map({ deadline < $0 }) ?? true else { return (nextID, false) }
            armed = deadline
            return (nextID, true)
        }
        if arm { self.arm(deadline) }
        return SendTimer.Token(id: id)
    }

    func cancel(_ token: SendTimer.Token) {
        lock.withLock { _ = work.removeValue(forKey: token.id) }
    }

    private func arm(_ deadline: UInt64) {
        queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline)) { [self] in fire(armedFor: deadline) }
    }

    /// Runs what is due, then arms the next deadline unless an earlier wake-up is armed already.
    private func fire(armedFor deadline: UInt64) {
        let now = SendTimer.now
        let (due, next) = lock.withLock { () -> ([@Sendable () -> Void], UInt64?) in
            if armed == deadline { armed = nil }
            var due: [@Sendable () -> Void] = []
            while let first = heap.first, first.deadline <= now || work[first.id] == nil {
                popFirst()
                if let item = work.removeValue(forKey: first.id) { due.append(item) }
            }
            guard let head = heap.first?.deadline, armed.map({ head < $0 }) ?? true else { return (due, nil) }
            armed = head
            return (due, head)
        }
        for item in due { item() }
        if let next { arm(next) }
    }

    // MARK: - The heap (under `lock`)

    /// Rebuilds the heap from the live entries when cancelled ones outnumber them.
    private func compactIfMostlyCancelled() {
        guard heap.count > 64, heap.count > 2 * work.count else { return }
        let live = heap.filter { work[$0.id] != nil }.sorted { $0.deadline < $1.deadline }
        heap = live  // a sorted array is a valid min-heap
    }

    private func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
