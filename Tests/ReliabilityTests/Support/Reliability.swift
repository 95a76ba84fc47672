import FormDataKit
import Testing

/// The reliability suites (property round trips, faults, load, security) run one at a time:
/// each is heavy on its own, and the machine has two cores shared with every other suite.
@Suite("Reliability", .serialized)
enum Reliability {
    /// The transport the reliability tests send with: their own session, apart from the shared
    /// one other suites load.
    static let transport = URLSessionTransport()
    /// The curl transport the fault tests also run against (their own instance).
    static let curlTransport = CurlTransport()
}

/// The transports the fault tests run against.
enum FaultTransport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case curl
    case urlSession

    var transport: any FormDataTransport { self == .curl ? Reliability.curlTransport : Reliability.transport }
    var testDescription: String { rawValue }
}
