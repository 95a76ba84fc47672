import Foundation

/// Reads just enough of an X.509 certificate (DER or PEM) to tell whether it is self-issued
/// (issuer name equals subject name), the shape a trust anchor must have.
enum CertificateNames {
    /// Whether `certificate` is a certificate whose issuer and subject names are the same bytes.
    /// False for anything that does not parse.
    static func isSelfIssued(_ certificate: Data) -> Bool {
        guard let der = derBytes(certificate) else { return false }
        var reader = DERReader(bytes: der[...])
        // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serial,
        //   signature, issuer, validity, subject, … } … }
        guard let certificateBody = reader.read(tag: 0x30) else { return false }
        var outer = DERReader(bytes: certificateBody.content)
        guard let tbs = outer.read(tag: 0x30) else { return false }
        var fields = DERReader(bytes: tbs.content)
        if fields.peekTag == 0xA0 { _ = fields.read(tag: 0xA0) }
        guard fields.read(tag: 0x02) != nil, fields.read(tag: 0x30) != nil,
            let issuer = fields.read(tag: 0x30), fields.read(tag: 0x30) != nil,
            let subject = fields.read(tag: 0x30)
        else { return false }
        return issuer.whole.elementsEqual(subject.whole)
    }

    /// The DER bytes of a DER or PEM certificate (the first one in a PEM file).
    static func derBytes(_ data: Data) -> [UInt8]? {
        guard let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") else {
            return [UInt8](data)
        }
        let lines = text.split(whereSeparator: \.isNewline)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN CERTIFICATE-----") }),
            let end = lines[start...].firstIndex(where: { $0.hasPrefix("-----END CERTIFICATE-----") })
        else { return nil }
        let base64 = lines[(start + 1)..<end].joined()
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }

    /// A cursor over DER tag-length-value elements.
    struct DERReader {
        var bytes: ArraySlice<UInt8>

        var peekTag: UInt8? { bytes.first }

        /// The next element when its tag is `tag`: its content and its whole encoding.
        mutating func read(tag: UInt8) -> (content: ArraySlice<UInt8>, whole: ArraySlice<UInt8>)? {
            guard let first = bytes.first, first == tag else { return nil }
            var index = bytes.startIndex + 1
            guard index < bytes.endIndex else { return nil }
            var length = Int(bytes[index])
            index += 1
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard count > 0, count <= 4, index + count <= bytes.endIndex else { return nil }
                length = 0
                for byte in bytes[index..<(index + count)] { length = length << 8 | Int(byte) }
                index += count
            }
            guard length >= 0, index + length <= bytes.endIndex else { return nil }
            let whole = bytes[bytes.startIndex..<(index + length)]
            let content = bytes[index..<(index + length)]
            bytes = bytes[(index + length)...]
            return (content, whole)
        }
    }
}
