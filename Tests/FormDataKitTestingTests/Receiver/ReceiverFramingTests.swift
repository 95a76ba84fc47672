import FormDataKit
@testable import FormDataKitTesting
import Foundation
import Testing

/// Issue 24: request framing that a hostile client on loopback used against the receiver. Each
/// request below is followed, on the same connection, by a second request (`/smuggled`): the
/// first must be answered 400 or 501 and the connection closed, so the second is never served.
/// Before the receiver moved to NIOHTTP1, every one of them was accepted (or, for a chunk size
/// of `-1`, trapped the process).
@Suite("Receiver: RFC 9112 framing refused")
struct ReceiverFramingTests {
    static let smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"

    /// A request (its head's first line and fields after `Host`, then the body) and the statuses
    /// that may answer it.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var request: String
        var statuses: Set<Int>
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "Content-Length with Transfer-Encoding",
            request: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            statuses: [400]),
        Case(
            name: "Transfer-Encoding: xchunked",
            request: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", statuses: [400, 501]),
        Case(
            name: "Transfer-Encoding: chunked, identity",
            request: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", statuses: [400, 501]),
        Case(
            name: "Transfer-Encoding: identity, chunked",
            request: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n", statuses: [400, 501]),
        Case(
            name: "two Transfer-Encoding fields",
            request: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            statuses: [400, 501]),
        Case(
            name: "two different Content-Lengths",
            request: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\na=1", statuses: [400]),
        Case(name: "Content-Length: +0", request: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: +0\r\n\r\n", statuses: [400]),
        Case(name: "Content-Length: -1", request: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", statuses: [400]),
        Case(name: "Content-Length: 0x3", request: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0x3\r\n\r\na=1", statuses: [400]),
        Case(name: "Content-Length: 1 2", request: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1 2\r\n\r\n", statuses: [400]),
        Case(
            name: "chunked on HTTP/1.0",
            request: "POST /a HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n3\r\na=1\r\n0\r\n\r\n",
            statuses: [400]),
        Case(
            name: "chunk size +3",
            request: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n+3\r\na=1\r\n0\r\n\r\n", statuses: [400]),
        Case(
            name: "chunk size 0x3",
            request: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0x3\r\na=1\r\n0\r\n\r\n", statuses: [400]),
        Case(
            name: "chunk size with a space inside",
            request: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1 1\r\na=1\r\n0\r\n\r\n", statuses: [400]),
    ]

    @Test("refused with the connection closed, the request behind it never served", arguments: cases)
    func refusedAndClosed(_ testCase: Case) async throws {
        try await ReceiverHardeningTests.withReceiver { receiver in
            let port = receiver.port
            let reading = try await ReceiverHardeningTests.onOwnThread {
                let client = try RawSocketClient(port: port)
                client.send(testCase.request + Self.smuggled)
                return client.readUntilClosed(timeout: 10)
            }
            #expect(reading.closed, "the connection stayed open: \(reading.text.debugDescription)")
            #expect(reading.statuses.count == 1, "\(reading.text.debugDescription)")
            #expect(reading.statuses.first.map { testCase.statuses.contains($0) } == true, "\(reading.text.debugDescription)")
            #expect(!receiver.requests.contains { $0.path == "/smuggled" })
        }
    }

    /// Chunk sizes that used to reach the body reader: `-1` trapped the process
    /// ("Range requires lowerBound <= upperBound"), `+5` was read as 5. Each must leave the
    /// receiver serving: answered 400 and closed, or (a size too large to arrive) waiting for the
    /// body, with a normal request on another connection answered at once.
    @Test("hostile chunk sizes never crash the receiver", arguments: ["-1", "+5", "7fffffffffffffff", "ffffffffffffffffff", "-0"])
    func hostileChunkSize(_ size: String) async throws {
        try await ReceiverHardeningTests.withReceiver { receiver in
            let port = receiver.port
            let hostile = try await ReceiverHardeningTests.onOwnThread { () throws -> RawSocketClient in
                let client = try RawSocketClient(port: port)
                client.send("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nA\r\n0\r\n\r\n" + Self.smuggled)
                return client
            }
            let normal = try await ReceiverHardeningTests.exchange(
                port: port, ReceiverHardeningTests.rawRequest("/after", method: "GET"), timeout: 10)
            #expect(normal.status == 200)
            // A size the receiver refuses: read until it closes (the event; a minute bounds a broken
            // build). One too large to arrive leaves the connection waiting for the body: 0.5 s is
            // a window for a wrong answer to show, which a slow machine can only make miss one.
            // (It was 0.5 s for both: a 400 later than that on a busy machine failed the test.)
            let waitsForBody = size == "7fffffffffffffff"
            let reading = try await ReceiverHardeningTests.onOwnThread { hostile.readUntilClosed(timeout: waitsForBody ? 0.5 : 60) }
            #expect(!reading.statuses.contains(200), "\(reading.text.debugDescription)")
            #expect(!receiver.requests.contains { $0.path == "/smuggled" || $0.path == "/a" })
            if size != "7fffffffffffffff" {  // the others cannot be a chunk size at all
                #expect(reading.statuses == [400], "\(reading.text.debugDescription)")
            }
        }
    }

    @Test("a well-framed request on the same connection as another is still served")
    func keepAliveStillWorks() async throws {
        try await ReceiverHardeningTests.withReceiver { receiver in
            let port = receiver.port
            let reading = try await ReceiverHardeningTests.onOwnThread {
                let client = try RawSocketClient(port: port)
                client.send(
                    "POST /one HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=1"
                        + "POST /two HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nb=2\r\n0\r\n\r\n"
                        + "GET /three HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return client.readUntilClosed(timeout: 10)
            }
            #expect(reading.statuses == [200, 200, 200], "\(reading.text.debugDescription)")
            #expect(receiver.requests.map(\.path) == ["/one", "/two", "/three"])
            #expect(receiver.requests.dropFirst().first?.form?.value("b") == "2")
        }
    }

    @Test("the framing rules on their own (what llhttp lets through)")
    func framingRules() {
        func check(_ minor: Int, _ headers: [(String, String)]) -> Int? {
            FramingRules.check(minorVersion: minor, headers: headers.map { (name: $0.0, value: $0.1) })?.status
        }
        #expect(check(1, []) == nil)
        #expect(check(1, [("Content-Length", "12")]) == nil)
        #expect(check(1, [("content-length", " 12 "), ("Content-Length", "12")]) == nil)  // the same length twice
        #expect(check(1, [("Transfer-Encoding", "chunked")]) == nil)
        #expect(check(1, [("Transfer-Encoding", " Chunked ")]) == nil)
        #expect(check(1, [("Transfer-Encoding", "chunked"), ("Content-Length", "3")]) == 400)
        #expect(check(0, [("Transfer-Encoding", "chunked")]) == 400)
        for coding in ["identity, chunked", "chunked, identity", "xchunked", "gzip", "chunked,", ""] {
            #expect(check(1, [("Transfer-Encoding", coding)]) == 501, "\(coding)")
        }
        #expect(check(1, [("Transfer-Encoding", "chunked"), ("transfer-encoding", "chunked")]) == 501)
        for length in ["+0", "-1", "0x3", "1 2", "", "1,1", "99999999999999999999", "１"] {
            #expect(check(1, [("Content-Length", length)]) == 400, "\(length)")
        }
        #expect(check(1, [("Content-Length", "3"), ("Content-Length", "5")]) == 400)
    }
}
