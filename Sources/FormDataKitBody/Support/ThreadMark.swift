import FormDataKitWire

/// A mark a thread carries while it does one kind of work, asked with ``isCurrent`` from code
/// that must behave differently there: a ``ThreadScopedObject`` whose object is only a token.
package final class ThreadMark: Sendable {
    /// What a marked thread carries (one for every mark: only its presence counts).
    private final class Token: Sendable {}
    private static let token = Token()
    private let scope = ThreadScopedObject<Token>()

    /// A new mark, carried by no thread yet.
    package init() {}

    /// Runs `work` with the calling thread marked (restoring the mark it had after).
    package func run<T>(_ work: () throws -> T) rethrows -> T { try scope.run(with: Self.token, work) }

    /// Marks the calling thread for the rest of its life (a thread made for this work alone).
    package func markCurrentThread() { scope.carryForRestOfThread(Self.token) }

    /// Whether the calling thread carries the mark.
    package var isCurrent: Bool { scope.isCarried }
}
