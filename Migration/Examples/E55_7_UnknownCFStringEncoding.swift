// Before (Objective-C, ASIHTTPRequest) — a forum client that posts in the Mac's Simplified
// Chinese encoding, passing the CoreFoundation constant through NSString's numbering:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setStringEncoding:CFStringConvertEncodingToNSStringEncoding(kCFStringEncodingMacChineseSimp)];
//     [request setPostValue:@"你好" forKey:@"subject"];
//
// After (Swift, FormDataKit): a raw value `0x80000000 | CFStringEncoding` works whenever the
// platform's converter serves that encoding exactly (GB 18030, GBK, Big5, EUC-KR, the ISO 8859,
// DOS and Windows code pages, Mac OS Roman, KOI8…). glibc's iconv has no Mac Chinese
// Simplified converter, so that value is refused when the body is built, with
// `FormDataError.unknownEncoding(rawValue:)` naming it and the IANA charset to use instead:
// `String.Encoding.iana("gb2312")` writes the same bytes for Chinese text.

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// The port, with the encoding the old code passed or the one chosen by name.
func forumPost(_ encoding: String.Encoding) -> FormDataRequest {
    let request = FormDataRequest(url: Example.uploadURL)
    request.stringEncoding = encoding
    request.setPostValue("你好", forKey: "subject")
    return request
}

@Suite("55.7 A CoreFoundation encoding number from ported code")
struct UnknownCFStringEncodingExample {
    @Test func theUnservedNumberIsRefusedByName() throws {
        // The number as the old code wrote it (-2147483623, kCFStringEncodingMacChineseSimp).
        let number = UInt(bitPattern: -2_147_483_623)
        let ported = forumPost(String.Encoding(rawValue: number))
        #expect(throws: FormDataError.unknownEncoding(rawValue: number)) { try ported.buildPostBody() }
        do {
            try ported.buildPostBody()
        } catch {
            #expect("\(error)".contains("kCFStringEncodingMacChineseSimp"))
            #expect("\(error)".contains(".iana(\"gb2312\")"))
        }
    }

    @Test func theIANANameSendsTheBytes() throws {
        let port = forumPost(try #require(String.Encoding.iana("gb2312")))
        // 你好 in GB2312: C4 E3 BA C3.
        #expect(try Example.body(port) == Data("subject=%C4%E3%BA%C3".utf8))
        #expect(port.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=gb2312")
    }

    @Test func numbersTheConverterServesStillWork() throws {
        // kCFStringEncodingMacRoman as a raw value: é is 0x8E in Mac OS Roman.
        let roman = FormDataRequest(url: Example.uploadURL)
        roman.stringEncoding = String.Encoding(rawValue: 0x8000_0000)
        roman.setPostValue("café", forKey: "q")
        #expect(try Example.body(roman) == Data("q=caf%8E".utf8))
        #expect(roman.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=macintosh")
    }
}
