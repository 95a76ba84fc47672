// Before (Objective-C, ASIHTTPRequest) — a form for an old Chinese endpoint that expects GBK:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setStringEncoding:CFStringConvertEncodingToNSStringEncoding(kCFStringEncodingGB_18030_2000)];
//     [request setPostValue:@"张三" forKey:@"姓名"];
//     [request setPostValue:@"北京市" forKey:@"城市"];
//
// After (Swift, FormDataKit): the same raw value works (`String.Encoding(rawValue: 0x80000632)`),
// or the named constant `.legacyGB18030` (`.legacyGBK`, `.legacyBig5`, `.legacyEUCKR`,
// `.legacyKOI8R`), or any charset by name: `String.Encoding.iana("gbk")`. On Linux the bytes come
// from glibc's iconv; `charset=` names the IANA name.

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// The port.
func gbkForm(_ encoding: String.Encoding) -> FormDataRequest {
    let request = FormDataRequest(url: Example.uploadURL)
    request.stringEncoding = encoding
    request.setPostValue("张三", forKey: "姓名")
    request.setPostValue("北京市", forKey: "城市")
    return request
}

@Suite("19 A form in GBK / GB18030 for a legacy server")
struct GBKFormExample {
    @Test func theLegacyBytes() throws {
        // GB18030 as ported code passes it (CFStringConvertEncodingToNSStringEncoding's value).
        let ported = gbkForm(String.Encoding(rawValue: 0x8000_0632))
        // 姓名 = D0 D5 C3 FB, 张三 = D5 C5 C8 FD, 城市 = B3 C7 CA D0, 北京市 = B1 B1 BE A9 CA D0.
        #expect(try Example.body(ported) == Data("%D0%D5%C3%FB=%D5%C5%C8%FD&%B3%C7%CA%D0=%B1%B1%BE%A9%CA%D0".utf8))
        #expect(ported.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=gb18030")
        // GBK by name: the same bytes for these characters, named gbk.
        let byName = gbkForm(try #require(String.Encoding.iana("GBK")))
        #expect(try Example.body(byName) == (try Example.body(ported)))
        #expect(byName.requestHeaders["Content-Type"] == "application/x-www-form-urlencoded; charset=gbk")
    }

    @Test func aCharacterGBKLacksIsAnErrorNamingTheField() {
        let request = gbkForm(.legacyGBK)
        request.setPostValue("😀", forKey: "表情")
        #expect(throws: FormDataError.unencodableString(field: "表情", role: .value, encoding: .legacyGBK)) {
            try request.buildPostBody()
        }
    }
}
