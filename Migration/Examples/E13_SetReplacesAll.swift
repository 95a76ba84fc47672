// Before (Objective-C, ASIHTTPRequest) — testMultipleValuesForASingleKey, second half:
//
//     [request addPostValue:@"here" forKey:@"test_value[]"];   // … are, some, values
//     [request setPostValue:@"this is new data" forKey:@"test_value[]"];
//     [request addFile:file1Path forKey:@"test_file[]"];
//     [request addFile:file2Path forKey:@"test_file[]"];
//     [request setData:[@"this is new data" dataUsingEncoding:NSUTF8StringEncoding] forKey:@"test_file[]"];
//     // server prints "this is new data\r\nfile\r\n"
//
// After (Swift, FormDataKit): `set…` removes every entry with the key and appends (so the key
// moves to the end), exactly as ASI did.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The port.
func setReplacesAll(files: [String]) throws -> FormDataRequest {
    let request = FormDataRequest(url: Example.uploadURL)
    for value in ["here", "are", "some", "values"] { request.addPostValue(value, forKey: "test_value[]") }
    request.addPostValue("kept", forKey: "other")
    request.setPostValue("this is new data", forKey: "test_value[]")
    for file in files { try request.addFile(file, forKey: "test_file[]") }
    request.setData(Data("this is new data".utf8), forKey: "test_file[]")
    return request
}

@Suite("13 set… replaces every entry with the key")
struct SetReplacesAllExample {
    @Test func legacySemantics() throws {
        try Example.withDirectory { directory in
            let one = try Example.write(Data("hello".utf8), named: "file1.txt", in: directory)
            let snapshot = try FormSnapshot(setReplacesAll(files: [one.path]))
            #expect(snapshot.fields.map(\.name) == ["other", "test_value[]"])  // moved to the end
            let printed = snapshot.fields.filter { $0.name == "test_value[]" }.compactMap(\.text) + snapshot.files.compactMap(\.fileName)
            #expect(printed.map { $0 + "\r\n" }.joined() == "this is new data\r\nfile\r\n")
            #expect(snapshot.files.first?.contentType == "application/octet-stream")
        }
    }

    @Test func sameAsTheAFDictionary() throws {
        try Example.withDirectory { directory in
            let one = try Example.write(Data("hello".utf8), named: "file1.txt", in: directory)
            let af = try AFHTTPRequestSerializer.serializer().multipartFormRequest(
                withMethod: "POST", urlString: Example.uploadURL.absoluteString,
                parameters: ["test_value[]": "this is new data", "other": "kept"]
            ) { form in
                form.appendPart(
                    withFileData: Data("this is new data".utf8), name: "test_file[]", fileName: "file",
                    mimeType: "application/octet-stream")
            }
            #expect(
                snapshotsMatch(
                    try FormSnapshot(setReplacesAll(files: [one.path])), try FormSnapshot(af),
                    tolerating: Example.acrossFacades))
        }
    }
}
