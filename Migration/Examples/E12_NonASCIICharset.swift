// Before (Objective-C, ASIHTTPRequest) — testCharset:
//
//     [request setPostValue:@"£££s don't seem to buy me many $$$s these days" forKey:@"value"];
//     [request setStringEncoding:NSISOLatin1StringEncoding];   // or NSWindowsCP1252StringEncoding
//     [request setPostFormat:ASIMultipartFormDataPostFormat]; // (and the URL-encoded variant)
//
// After (Swift, FormDataKit): `stringEncoding = .isoLatin1` (or `.windowsCP1252`); the IANA name
// goes into `charset=`. A character the encoding cannot hold (`€` in ISO-8859-1) is an error
// naming the field — ASI silently sent an empty value.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The legacy test value.
let pounds = "£££s don't seem to buy me many $$$s these days"

/// The port.
func charsetForm(_ encoding: String.Encoding, format: PostFormat, value: String = pounds) -> FormDataRequest {
    let request = FormDataRequest(url: Example.uploadURL)
    request.setPostValue(value, forKey: "value")
    request.stringEncoding = encoding
    request.postFormat = format
    return request
}

@Suite("12 Non-ASCII form in a legacy charset")
struct CharsetExample {
    @Test func legacyBytes() throws {
        let latin1 = charsetForm(.isoLatin1, format: .urlEncoded)
        #expect(
            try Example.body(latin1) == Data("value=%A3%A3%A3s%20don%27t%20seem%20to%20buy%20me%20many%20%24%24%24s%20these%20days".utf8))
        #expect(latin1.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=iso-8859-1")
        let cp1252 = charsetForm(.windowsCP1252, format: .multipartFormData)
        let snapshot = try FormSnapshot(cp1252)
        #expect(snapshot.charset == "windows-1252")
        #expect(snapshot.fields.first?.content == pounds.data(using: .windowsCP1252))  // raw 0xA3 bytes
        let utf8 = charsetForm(.utf8, format: .urlEncoded, value: "€€€")
        #expect(try Example.body(utf8) == Data("value=%E2%82%AC%E2%82%AC%E2%82%AC".utf8))
        #expect(throws: FormDataError.self) { try charsetForm(.isoLatin1, format: .urlEncoded, value: "€").buildPostBody() }
    }

    @Test func theAFFacade() throws {
        let serializer = AFHTTPRequestSerializer.serializer()
        serializer.stringEncoding = .isoLatin1
        // Multipart: AF encodes parameter values with stringEncoding too — same bytes.
        let afMultipart = try serializer.multipartFormRequest(
            withMethod: "POST", urlString: Example.uploadURL.absoluteString, parameters: ["value": pounds], constructingBodyWith: nil)
        #expect(
            snapshotsMatch(
                try FormSnapshot(charsetForm(.isoLatin1, format: .multipartFormData)), try FormSnapshot(afMultipart),
                tolerating: Example.acrossFacades))
        // URL-encoded: AF always escapes UTF-8 (AFNetworking issue #4273) — the diff shows it.
        let afEncoded = try serializer.request(
            withMethod: "POST", urlString: Example.uploadURL.absoluteString, parameters: ["value": pounds])
        let differences = try FormSnapshot(charsetForm(.isoLatin1, format: .urlEncoded))
            .differences(from: try FormSnapshot(afEncoded), tolerating: .charsetParameter)
        #expect(differences.map(\.location) == ["part 1 \"value\" content"])
    }
}
