import Foundation

/// Public-key pins from certificates: what AFNetworking's `AFSSLPinningModePublicKey` compares,
/// in the form libcurl's `PINNEDPUBLICKEY` takes (`sha256//<base64>`).
public enum NetworkPinning {
    /// `sha256//` + the base64 SHA-256 of the certificate's SubjectPublicKeyInfo; nil when
    /// `certificate` (PEM or DER) is not an X.509 certificate.
    /// - Parameter certificate: a certificate, PEM or DER.
    /// - Returns: the pin, as curl's `--pinnedpubkey` and `FormDataRequest.pinnedPublicKeyHashes`
    ///   take it; nil when `certificate` is not an X.509 certificate.
    public static func publicKeyHash(ofCertificate certificate: Data) -> String? {
        guard let der = derBytes(of: certificate), let info = subjectPublicKeyInfo(ofCertificate: der) else { return nil }
        var hash = SHA256()
        hash.update(info)
        return "sha256//" + Data(hash.digest).base64EncodedString()
    }

    /// The DER bytes of a certificate given as DER or PEM (the first certificate of a PEM file).
    static func derBytes(of certificate: Data) -> [UInt8]? {
        let text = String(decoding: certificate, as: UTF8.self)
        guard let begin = text.range(of: "-----BEGIN CERTIFICATE-----") else { return [UInt8](certificate) }
        guard let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex) else { return nil }
        let base64 = text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(base64)).map { [UInt8]($0) }
    }

    /// The SubjectPublicKeyInfo element (tag, length and content) of a DER certificate:
    /// Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber,
    /// signature, issuer, validity, subject, subjectPublicKeyInfo, … }, … }.
    static func subjectPublicKeyInfo(ofCertificate der: [UInt8]) -> ArraySlice<UInt8>? {
        guard let certificate = element(in: der[...], at: der.startIndex), certificate.tag == 0x30,
            let tbs = element(in: der[...], at: certificate.contentStart), tbs.tag == 0x30
        else { return nil }
        var position = tbs.contentStart
        var index = 0
        // Fields of tbsCertificate before subjectPublicKeyInfo: version (optional, [0]), serial,
        // signature, issuer, validity, subject.
        while position < tbs.end, let field = element(in: der[...], at: position) {
            if index == 0 && field.tag == 0xA0 {
                position = field.end
                continue
            }
            if index == 5 { return field.tag == 0x30 ? der[position..<field.end] : nil }
            index += 1
            position = field.end
        }
        return nil
    }

    /// One DER element at `start`: its tag, where its content starts and where it ends.
    private static func element(in bytes: ArraySlice<UInt8>, at start: Int) -> (tag: UInt8, contentStart: Int, end: Int)? {
        guard start + 2 <= bytes.endIndex else { return nil }
        let tag = bytes[start]
        var length = Int(bytes[start + 1])
        var contentStart = start + 2
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard (1...4).contains(count), contentStart + count <= bytes.endIndex else { return nil }
            length = 0
            for offset in 0..<count { length = length << 8 | Int(bytes[contentStart + offset]) }
            contentStart += count
        }
        guard length <= bytes.endIndex - contentStart else { return nil }
        return (tag, contentStart, contentStart + length)
    }
}
