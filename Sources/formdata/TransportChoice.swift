import ArgumentParser
import FormDataKit
import FormDataKitAsyncHTTPClient
import Foundation

/// `--transport`: which FormDataKit transport sends the request.
enum TransportChoice: String, ExpressibleByArgument, CaseIterable {
    /// The system libcurl: streams the body with its exact length, no temporary file.
    case curl
    /// FoundationNetworking's URLSession (bodies with files are spooled to a temporary file).
    case urlsession
    /// AsyncHTTPClient: streams the body with its exact length, no temporary file.
    case asynchttpclient

    /// libcurl on Linux (URLSession when libcurl cannot be loaded), URLSession elsewhere.
    static var platformDefault: TransportChoice {
        #if os(Linux)
        return CurlTransport.isAvailable ? .curl : .urlsession
        #else
        return .urlsession
        #endif
    }

    /// Runs `body` with the chosen transport, shutting a transport it created down afterwards.
    /// `pinnedCertificate` (a PEM or DER file) becomes the only trust anchor (curl and AsyncHTTPClient).
    func withTransport<T>(pinnedCertificate: String?,
                          _ body: (any FormDataTransport) async throws -> T) async throws -> T {
        switch self {
        case .curl:
            if let reason = CurlTransport.unavailableReason {
                throw ValidationError("--transport curl: \(reason)")
            }
            guard let pinnedCertificate else { return try await body(CurlTransport.shared) }
            let data = try Data(contentsOf: URL(fileURLWithPath: pinnedCertificate))
            return try await body(CurlTransport(configuration: .init(trust: TrustAnchorPinning(certificates: [data]))))
        case .urlsession:
            if pinnedCertificate != nil {
                throw ValidationError("--pinned-cert needs --transport asynchttpclient (URLSession on Linux has no trust-root setting)")
            }
            return try await body(URLSessionTransport.shared)
        case .asynchttpclient:
            var configuration = AsyncHTTPClientTransport.Configuration()
            if let pinnedCertificate {
                let data = try Data(contentsOf: URL(fileURLWithPath: pinnedCertificate))
                configuration = try AsyncHTTPClientTransport.Configuration(
                    pinning: TrustAnchorPinning(certificates: [data]))
            }
            let transport = AsyncHTTPClientTransport(configuration: configuration)
            do {
                let result = try await body(transport)
                try await transport.shutdown()
                return result
            } catch {
                try? await transport.shutdown()
                throw error
            }
        }
    }
}
