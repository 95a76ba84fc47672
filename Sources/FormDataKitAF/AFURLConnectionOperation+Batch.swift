import FormDataKit
import Foundation

extension AFURLConnectionOperation {
    /// Called after each operation of a batch finishes: how many have, of how many.
    public typealias BatchProgressBlock = @Sendable (_ numberOfFinishedOperations: UInt, _ totalNumberOfOperations: UInt) -> Void
    /// Called once every operation of a batch has finished, with the operations.
    public typealias BatchCompletionBlock = @Sendable (_ operations: [AFURLConnectionOperation]) -> Void

    /// AFNetworking 2's `+batchOfRequestOperations:progressBlock:completionBlock:`: the
    /// operations, each with its `completionBlock` wrapped to report the batch's progress after
    /// its own, then one more operation that depends on all of them and calls `completionBlock`
    /// after every progress call. Add them all to an `OperationQueue`.
    ///
    /// Progress counts finished operations (cancelled and failed ones included), as AF 2 did:
    /// `progressBlock(1, n)` … `progressBlock(n, n)`, one call at a time, in that order; the
    /// blocks run on a global queue.
    /// - Parameters:
    ///   - operations: the batch.
    ///   - progressBlock: told after each operation finished.
    ///   - completionBlock: told once, after the last progress call.
    /// - Returns: `operations` followed by the batch's completion operation.
    public static func batchOfRequestOperations(
        _ operations: [AFURLConnectionOperation], progressBlock: BatchProgressBlock?, completionBlock: BatchCompletionBlock?
    ) -> [Operation] {
        let group = DispatchGroup()
        let finished = Locked<UInt>(0)
        let total = UInt(operations.count)
        let batched = BlockOperation {
            group.notify(queue: DispatchQueue.sharedGlobal) { completionBlock?(operations) }
        }
        for operation in operations {
            group.enter()
            let original = operation.completionBlock
            operation.completionBlock = {
                original?()
                // Counted and reported under one lock: the calls come in order, one at a time.
                finished.withLock { count in
                    count += 1
                    progressBlock?(count, total)
                }
                group.leave()
            }
            batched.addDependency(operation)
        }
        return operations + [batched]
    }
}
