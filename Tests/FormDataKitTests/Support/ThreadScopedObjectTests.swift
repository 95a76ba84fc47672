@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// What a thread carries, and for how long: scoped to ``ThreadScopedObject/run(with:_:)`` (the
/// outer object back after a nested run), or for the rest of a thread; never seen by another thread.
@Suite("Thread-scoped objects and marks")
struct ThreadScopedObjectTests {
    final class Box: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    @Test("an object is carried inside run only, the outer one again after a nested run")
    func scoped() {
        let scope = ThreadScopedObject<Box>()
        let (outer, inner) = (Box("outer"), Box("inner"))
        #expect(scope.current == nil && !scope.isCarried)
        scope.run(with: outer) {
            #expect(scope.current === outer && scope.isCarried)
            scope.run(with: inner) { #expect(scope.current === inner) }
            #expect(scope.current === outer)
        }
        #expect(scope.current == nil && !scope.isCarried)
    }

    @Test("a mark: inside run, or for the rest of a thread made for it; not on other threads")
    func marks() async {
        let mark = ThreadMark()
        #expect(!mark.isCurrent)
        mark.run { #expect(mark.isCurrent) }
        #expect(!mark.isCurrent)
        let seen = await withCheckedContinuation { (continuation: CheckedContinuation<(Bool, Bool), Never>) in
            Thread.detachNewThread {
                let before = mark.isCurrent
                mark.markCurrentThread()
                mark.run {}
                continuation.resume(returning: (before, mark.isCurrent))
            }
        }
        #expect(seen == (false, true))
        #expect(!mark.isCurrent)
    }
}
