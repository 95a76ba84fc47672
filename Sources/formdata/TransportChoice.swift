import ArgumentParser
import FormDataKit
#if AsyncHTTPClient
import FormDataKitAsyncHTTPClient
#endif
import Foundation

/// `--transport`: which FormDataKit transport sends the request.
enum TransportChoice: String, ExpressibleByArgument, CaseIterable {
    /// The system libcurl: streams the body with its exact length, no temporary file.
    case curl
    /// FoundationNetworking's URLSession (bodies with files are spooled to a temporary file).
    case urlsession
    #if AsyncHTTPClient
    /// AsyncHTTPClient: streams the body with its exact length, no temporary file (only in a
    /// build with the package's AsyncHTTPClient trait).
    case asynchttpclient
    #endif

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
    /// `cookieJarFile` (curl only) is read before and written after the send.
    func withTransport<T>(
        pinnedCertificate: String?, cookieJarFile: String? = nil,
        _ body: (any FormDataTransport) async throws -> T
    ) async throws -> T {
        if cookieJarFile != nil && self != .curl {
            throw ValidationError("--cookie-jar needs --transport curl (the only transport with a cookie jar)")
        }
        switch self {
        case .curl:
            if let reason = CurlTransport.unavailableReason {
                throw ValidationError("--transport curl: \(reason)")
            }
            guard pinnedCertificate != nil || cookieJarFile != nil else { return try await body(CurlTransport.shared) }
            let trust = try pinnedCertificate.map { TrustAnchorPinning(certificates: [try Data(contentsOf: URL(fileURLWithPath: $0))]) }
            let transport = CurlTransport(configuration: .init(trust: trust, cookieJarFile: cookieJarFile))
            // Shut down before returning: the process exits next, and OpenSSL's exit-time cleanup
            // crashed a transport thread still releasing its handles (seen: 1 run in ~10).
            do {
                let result = try await body(transport)
                await transport.shutdown()
                return result
            } catch {
                await transport.shutdown()
                throw error
            }
        case .urlsession:
            if pinnedCertificate != nil {
                throw ValidationError("--pinned-cert needs --transport curl (URLSession on Linux has no trust-root setting)")
            }
            return try await body(URLSessionTransport.shared)
        #if AsyncHTTPClient
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
        #endif
        }
    }
}
