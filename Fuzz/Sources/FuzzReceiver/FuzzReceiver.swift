#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKitTesting
import Foundation

/// libFuzzer's driver (linked in by `-sanitize=fuzzer`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The receiver under test: one `FormReceiver` in this process on 127.0.0.1, as a test process
/// embeds it, with short deadlines so that an input that leaves a request unfinished costs
/// little. Started once, before the driver runs.
nonisolated(unsafe) var receiverPort: UInt16 = 0
nonisolated(unsafe) var keepAlive: FormReceiver?

/// One input, sent as is on a new connection to the receiver — request framing (request line,
/// header fields, Content-Length, Transfer-Encoding, chunk sizes, pipelined requests) straight
/// into NIOHTTP1's decoder, the framing rules and the receiver — then the write side is shut and
/// the answer read until the receiver closes (at most 2 s). Any answer or none is fine; a crash,
/// trap or sanitizer report is a bug, and so is a receiver that stops accepting connections.
func sendOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { fatalError("socket(): errno \(errno)") }
    defer { close(fd) }
    var time = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = receiverPort.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { fatalError("the receiver stopped accepting connections: errno \(errno)") }
    if let data, size > 0 {
        var offset = 0
        while offset < size {
            let sent = send(fd, data + offset, size - offset, Int32(MSG_NOSIGNAL))
            guard sent > 0 else { break }  // the receiver answered early and closed
            offset += sent
        }
    }
    shutdown(fd, Int32(SHUT_WR))
    var scratch = [UInt8](repeating: 0, count: 16 << 10)
    var total = 0
    while total < 1 << 20 {
        let count = recv(fd, &scratch, scratch.count, 0)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        total += count
    }
    return 0
}

@_cdecl("FuzzReceiver_main")
func fuzzReceiverMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    let started = DispatchSemaphore(value: 0)
    Task {
        let limits = FormReceiver.Limits(
            maxInflatedBytes: 1 << 20, maxParts: 100, logLimit: 10, logByteLimit: 1 << 20, maxConnections: 64, headDeadline: 0.5,
            bodyIdleDeadline: 0.5, maxBodyBytes: 1 << 20)
        do {
            let receiver = try await FormReceiver.start(keepLimit: 1 << 20, limits: limits)
            keepAlive = receiver
            receiverPort = receiver.port
        } catch {
            fatalError("could not start the receiver: \(error)")
        }
        started.signal()
    }
    started.wait()
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in sendOne(data, size) }
}
