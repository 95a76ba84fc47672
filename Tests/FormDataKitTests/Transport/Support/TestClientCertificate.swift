import Foundation
import FormDataKitTestSupport
import FormDataKitTesting

/// A TLS client certificate (PEM) and its key, made with `openssl` in a ``TestCertificates``
/// scratch directory (removed with it by `TestCertificates.remove()`), for servers that require
/// one (``ApacheServer/TLSSetup/clientCA``).
struct TestClientCertificate: Sendable {
    /// The client certificate (PEM).
    let certificate: String
    /// Its private key (PEM, unencrypted, elliptic curve P-256).
    let key: String
    /// The certificate and the key in one PEM file (what some clients take as one "certificate").
    let combined: String
    /// The subject's common name.
    let commonName: String

    /// A client certificate issued by `certificates.certificateAuthority` (signed with its key,
    /// `ca.key` beside it in `certificates.directory`): `clientAuth` extended key usage, valid
    /// for two days, subject `/CN=<commonName>/O=FormDataKit Tests` — which mod_ssl reports as
    /// `SSL_CLIENT_S_DN` `O=FormDataKit Tests,CN=<commonName>`.
    static func make(issuedBy certificates: TestCertificates, commonName: String = "formdatakit-test-client") async throws
        -> TestClientCertificate
    {
        let caKey = "\(certificates.directory)/ca.key"
        guard FileManager.default.fileExists(atPath: caKey) else {
            throw RealServers.Failure(description: "no CA key at \(caKey): TestCertificates no longer keeps it there")
        }
        let base = "\(certificates.directory)/client-\(UUID().uuidString)"
        let request = "\(base).csr"
        let extensions = "\(base).ext"
        try "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n"
            .write(toFile: extensions, atomically: false, encoding: .utf8)
        try await openssl([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "\(base).key", "-out", request, "-subj", "/CN=\(commonName)/O=FormDataKit Tests",
        ])
        try await openssl([
            "x509", "-req", "-in", request, "-CA", certificates.certificateAuthority, "-CAkey", caKey,
            "-CAcreateserial", "-days", "2", "-out", "\(base).pem", "-extfile", extensions,
        ])
        return try finish(base: base, commonName: commonName)
    }

    /// A self-signed client certificate (no CA issued it: a server requiring client
    /// certificates from a CA refuses it), in `directory`.
    static func makeSelfSigned(in directory: String, commonName: String = "formdatakit-untrusted-client") async throws
        -> TestClientCertificate
    {
        let base = "\(directory)/client-\(UUID().uuidString)"
        try await openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-keyout", "\(base).key", "-out", "\(base).pem", "-subj", "/CN=\(commonName)/O=FormDataKit Tests",
            "-addext", "extendedKeyUsage=clientAuth",
        ])
        return try finish(base: base, commonName: commonName)
    }

    /// Writes the combined file for `<base>.pem` and `<base>.key`.
    private static func finish(base: String, commonName: String) throws -> TestClientCertificate {
        let combined = "\(base)-combined.pem"
        try (String(contentsOfFile: "\(base).pem", encoding: .utf8) + String(contentsOfFile: "\(base).key", encoding: .utf8))
            .write(toFile: combined, atomically: false, encoding: .utf8)
        return TestClientCertificate(certificate: "\(base).pem", key: "\(base).key", combined: combined, commonName: commonName)
    }

    /// Runs `openssl` with `arguments` (suspending; ``SpawnedProcess`` waits on threads of its own).
    private static func openssl(_ arguments: [String]) async throws {
        let result = try await SpawnedProcess.run("/usr/bin/env", ["openssl"] + arguments)
        guard result.termination.succeeded else {
            throw RealServers.Failure(
                description: "openssl \(arguments.joined(separator: " ")): "
                    + String(decoding: result.stdout + result.stderr, as: UTF8.self))
        }
    }
}
