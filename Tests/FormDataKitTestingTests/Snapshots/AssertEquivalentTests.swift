import FormDataKit
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import XCTest

/// The XCTest helper: equivalent snapshots (different boundaries) pass.
final class AssertEquivalentTests: XCTestCase {
    func testDifferentBoundariesAreEquivalent() throws {
        let one = FormDataRequest(url: URL(string: "http://example.com/upload")!)
        one.setPostValue("1", forKey: "a")
        one.addData(Data("hi".utf8), forKey: "file")
        let two = FormDataRequest(url: URL(string: "http://example.com/upload")!)
        two.setPostValue("1", forKey: "a")
        two.addData(Data("hi".utf8), forKey: "file")
        let left = try FormSnapshot(one)
        let right = try FormSnapshot(two)
        XCTAssertNotEqual(left.boundary, right.boundary)
        assertEquivalent(left, right)
        XCTAssertEqual(left.differences(from: right, tolerating: .exact).map(\.location), ["boundary"])
    }

    func testBareBodiesWithAContentType() throws {
        let body = Data("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--B--\r\n".utf8)
        let snapshot = try FormSnapshot(body: body, contentType: "multipart/form-data; boundary=B")
        XCTAssertEqual(snapshot.bodyKind, .multipart)
        XCTAssertEqual(snapshot.fields.first?.text, "1")
        // The same field URL-encoded is a different body kind: reported, not hidden.
        let encoded = try FormSnapshot(body: Data("a=1".utf8), contentType: "application/x-www-form-urlencoded")
        XCTAssertEqual(snapshot.differences(from: encoded, tolerating: .all).map(\.location), ["content type", "body"])
    }
}
