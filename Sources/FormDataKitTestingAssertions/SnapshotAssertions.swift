import FormDataKitTesting
#if canImport(XCTest)
import XCTest
#endif
#if canImport(Testing)
import Testing
#endif

#if canImport(XCTest)
/// XCTest: fails the current test with the field-by-field differences when `lhs` and `rhs` are
/// not equivalent under `tolerance` (by default only the boundary may differ).
///
/// ```swift
/// assertEquivalent(try FormSnapshot(newRequest), try FormSnapshot(contentsOfCapture: legacyCapture))
/// ```
/// - Parameters:
///   - lhs: the first snapshot (a failure to make it fails the test).
///   - rhs: the second snapshot.
///   - tolerance: the differences allowed (``FormSnapshotTolerance/default``: the boundary).
///   - file: the file the failure is reported in.
///   - line: the line the failure is reported at.
public func assertEquivalent(
    _ lhs: @autoclosure () throws -> FormSnapshot, _ rhs: @autoclosure () throws -> FormSnapshot,
    tolerating tolerance: FormSnapshotTolerance = .default,
    file: StaticString = #filePath, line: UInt = #line
) {
    do {
        let left = try lhs()
        let right = try rhs()
        let report = left.diffReport(against: right, tolerating: tolerance)
        if report != "equivalent" { XCTFail(report, file: file, line: line) }
    } catch {
        XCTFail("Could not make a snapshot: \(error)", file: file, line: line)
    }
}
#endif

#if canImport(Testing)
/// Swift Testing: whether `lhs` and `rhs` are equivalent under `tolerance` (by default only the
/// boundary may differ). Use it in `#expect(snapshotsMatch(a, b))`; when they differ inside a
/// test, an issue with the field-by-field differences is recorded as well, so the failure says
/// what differs.
/// - Parameters:
///   - lhs: the first snapshot.
///   - rhs: the second snapshot.
///   - tolerance: the differences allowed (``FormSnapshotTolerance/default``: the boundary).
///   - sourceLocation: where the issue is recorded when they differ.
/// - Returns: whether they are equivalent.
public func snapshotsMatch(
    _ lhs: FormSnapshot, _ rhs: FormSnapshot, tolerating tolerance: FormSnapshotTolerance = .default,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    let report = lhs.diffReport(against: rhs, tolerating: tolerance)
    guard report != "equivalent" else { return true }
    if Test.current != nil { Issue.record(Comment(rawValue: report), sourceLocation: sourceLocation) }
    return false
}
#else
/// Whether `lhs` and `rhs` are equivalent under `tolerance` (by default only the boundary may differ).
/// - Parameters:
///   - lhs: the first snapshot.
///   - rhs: the second snapshot.
///   - tolerance: the differences allowed (``FormSnapshotTolerance/default``: the boundary).
/// - Returns: whether they are equivalent.
public func snapshotsMatch(_ lhs: FormSnapshot, _ rhs: FormSnapshot, tolerating tolerance: FormSnapshotTolerance = .default) -> Bool {
    lhs.matches(rhs, tolerating: tolerance)
}
#endif
