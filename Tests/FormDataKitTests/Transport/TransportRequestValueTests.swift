@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Foundation
import Testing

@testable import FormDataKit

/// `TransportRequest` keeps its parts in one shared box (copies are cheap); these check that it
/// still behaves as a value: a change to a copy never shows in the original, or the other way.
@Suite("TransportRequest is a value")
struct TransportRequestValueTests {
    static func original() -> TransportRequest {
        var request = TransportRequest(
            url: URL(string: "http://example.invalid/a")!, method: "POST", headers: [(name: "X-One", value: "1")],
            body: .data(Data("body".utf8)), timeoutInterval: 10)
        request.network.credentials = .init(user: "user", password: "secret")
        return request
    }

    @Test("setting each part of a copy leaves the original as it was")
    func settingACopy() {
        let original = Self.original()
        let untouched = Self.original()
        var copy = original
        copy.url = URL(string: "http://example.invalid/b")!
        copy.method = "PUT"
        copy.headers = [(name: "X-Two", value: "2")]
        copy.body = .none
        copy.timeoutInterval = 1
        copy.totalTimeoutInterval = 2
        copy.maximumDecompressedResponseSize = 3
        copy.maximumResponseSize = 4
        copy.network = NetworkOptions()
        copy.opensFreshConnection = true
        #expect(original == untouched)
        #expect(copy != original)
        #expect(copy.url.path == "/b" && copy.method == "PUT" && copy.header("X-Two") == "2" && copy.body == .none)
        #expect(copy.timeoutInterval == 1 && copy.totalTimeoutInterval == 2)
        #expect(copy.maximumDecompressedResponseSize == 3 && copy.maximumResponseSize == 4)
        #expect(copy.network.credentials == nil && copy.opensFreshConnection)
    }

    @Test("changing a copy's headers and network options in place leaves the original as it was, and the other way")
    func changingInPlace() {
        let untouched = Self.original()
        var original = Self.original()
        var copy = original
        copy.headers.append((name: "X-Two", value: "2"))
        copy.headers.removeAll { $0.name == "X-One" }
        copy.network.credentials = nil
        copy.network.challengeSchemes = ["Digest"]
        #expect(original == untouched)
        #expect(copy.headers.map(\.name) == ["X-Two"])
        #expect(copy.network.credentials == nil && copy.network.challengeSchemes == ["Digest"])
        let copied = copy
        original.headers.append((name: "X-Three", value: "3"))
        #expect(copy == copied)
        #expect(original.headers.map(\.name) == ["X-One", "X-Three"])
    }

    /// A request with every part away from its default, so a part the box's copy forgets shows.
    static func everyPartSet() -> TransportRequest {
        var request = original()
        request.totalTimeoutInterval = 7
        request.maximumDecompressedResponseSize = 8
        request.maximumResponseSize = 9
        request.opensFreshConnection = true
        return request
    }

    @Test("a change to one part of a copy carries every other part over", arguments: 0..<10)
    func copyKeepsTheOtherParts(changed: Int) {
        let original = Self.everyPartSet()
        var copy = original
        switch changed {
        case 0: copy.url = URL(string: "http://example.invalid/b")!
        case 1: copy.method = "PUT"
        case 2: copy.headers = []
        case 3: copy.body = .none
        case 4: copy.timeoutInterval = 1
        case 5: copy.totalTimeoutInterval = 2
        case 6: copy.maximumDecompressedResponseSize = 3
        case 7: copy.maximumResponseSize = 4
        case 8: copy.network = NetworkOptions()
        default: copy.opensFreshConnection = false
        }
        #expect((changed == 0) == (copy.url != original.url))
        #expect((changed == 1) == (copy.method != original.method))
        #expect((changed == 2) == (copy.headers.map(\.name) != original.headers.map(\.name)))
        #expect((changed == 3) == (copy.body != original.body))
        #expect((changed == 4) == (copy.timeoutInterval != original.timeoutInterval))
        #expect((changed == 5) == (copy.totalTimeoutInterval != original.totalTimeoutInterval))
        #expect((changed == 6) == (copy.maximumDecompressedResponseSize != original.maximumDecompressedResponseSize))
        #expect((changed == 7) == (copy.maximumResponseSize != original.maximumResponseSize))
        #expect((changed == 8) == (copy.network != original.network))
        #expect((changed == 9) == (copy.opensFreshConnection != original.opensFreshConnection))
    }
}
