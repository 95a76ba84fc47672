// Before (Objective-C, ASIHTTPRequest) — a GB2312 form for an old Chinese board, checked by
// hand in a proxy that showed the body as Latin-1:
//
//     ASIFormDataRequest *request = [ASIFormDataRequest requestWithURL:url];
//     [request setStringEncoding:CFStringConvertEncodingToNSStringEncoding(kCFStringEncodingGB_2312_80)];
//     [request setPostValue:@"张三" forKey:@"姓名"];
//     [request addData:avatar withFileName:@"头像.png" andContentType:@"image/png" forKey:@"附件"];
//
// After (Swift, FormDataKit + the migration kit): the receiver, `formdata serve`, `formdata diff`,
// `FormSnapshot` and `ParsedForm.value` read the text in the charset the body declares (the
// `charset=` of the request's Content-Type; for a multipart part its own charset, else the
// `_charset_` field); the comparison itself is of the bytes.

import FormDataKit
import FormDataKitTesting
import Foundation
import Testing

/// The port.
func boardPost(url: URL) throws -> FormDataRequest {
    let request = FormDataRequest(url: url)
    request.stringEncoding = try #require(String.Encoding.iana("gb2312"))
    request.setPostValue("张三", forKey: "姓名")
    request.addData(Data([0x89, 0x50, 0x4E, 0x47]), withFileName: "头像.png", andContentType: "image/png", forKey: "附件")
    return request
}

@Suite("55.8 The kit reads a GB2312 form as GB2312")
struct KitReadsDeclaredCharsetExample {
    @Test func theReceiverShowsText() async throws {
        let receiver = try await FormReceiver.start()
        defer { receiver.stopSynchronously() }
        let request = try boardPost(url: receiver.url("/upload"))
        Example.prepareToSend(request)
        _ = try await request.start()
        let received = try #require(receiver.lastRequest)
        #expect(received.form?.value("姓名") == "张三")
        #expect(received.form?.file("附件")?.fileName == "头像.png")
    }

    @Test func theSnapshotShowsTextAndKeepsBytes() throws {
        let snapshot = try FormSnapshot(try boardPost(url: Example.uploadURL))
        let field = try #require(snapshot.fields.first)
        #expect(field.name == "姓名")
        #expect(field.text == "张三")
        #expect(field.content == Data([0xD5, 0xC5, 0xC8, 0xFD]))  // the bytes, as compared
        #expect(snapshot.files.first?.fileName == "头像.png")
        #expect(snapshot.description.contains("\"姓名\" = \"张三\""))
    }
}
