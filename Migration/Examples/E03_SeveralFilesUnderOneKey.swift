// Before (Objective-C, ASIHTTPRequest) — testMultipleValuesForASingleKey:
//
//     [request addPostValue:@"here" forKey:@"test_value[]"];
//     [request addPostValue:@"are" forKey:@"test_value[]"];
//     [request addFile:file1Path forKey:@"test_file[]"];    // file1.txt, "hello"
//     [request addFile:file2Path forKey:@"test_file[]"];    // file2.txt, "there"
//
// After (Swift, FormDataKit): the same `add…` calls; every value and file keeps its place.

import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import FormDataKitTestingAssertions
import Foundation
import Testing

/// The port.
func severalFiles(url: URL, values: [String], files: [String]) throws -> FormDataRequest {
    let request = FormDataRequest(url: url)
    for value in values { request.addPostValue(value, forKey: "test_value[]") }
    for file in files { try request.addFile(file, forKey: "test_file[]") }
    return request
}

@Suite("03 Several files under files[]")
struct SeveralFilesExample {
    @Test func legacySemantics() throws {
        try Example.withDirectory { directory in
            let one = try Example.write(Data("hello".utf8), named: "file1.txt", in: directory)
            let two = try Example.write(Data("there".utf8), named: "file2.txt", in: directory)
            let snapshot = try FormSnapshot(
                severalFiles(
                    url: Example.uploadURL, values: ["here", "are", "some", "values"],
                    files: [one.path, two.path]))
            // What the legacy test server printed: each value, then each file name, in order.
            let printed = snapshot.fields.compactMap(\.text) + snapshot.files.compactMap(\.fileName)
            #expect(printed.map { $0 + "\r\n" }.joined() == "here\r\nare\r\nsome\r\nvalues\r\nfile1.txt\r\nfile2.txt\r\n")
            #expect(snapshot.files.map(\.content) == [Data("hello".utf8), Data("there".utf8)])
        }
    }

    @Test func sameFormThroughTheAFFacadeAndOrderMatters() throws {
        try Example.withDirectory { directory in
            let one = try Example.write(Data("hello".utf8), named: "file1.txt", in: directory)
            let two = try Example.write(Data("there".utf8), named: "file2.txt", in: directory)
            let asi = try FormSnapshot(severalFiles(url: Example.uploadURL, values: ["here", "are"], files: [one.path, two.path]))
            let serializer = AFHTTPRequestSerializer.serializer()
            let af = try FormSnapshot(
                serializer.multipartFormRequest(
                    withMethod: "POST", urlString: Example.uploadURL.absoluteString, parameters: ["test_value[]": ["here", "are"]]
                ) { form in
                    try form.appendPart(withFileURL: one, name: "test_file[]")
                    try form.appendPart(withFileURL: two, name: "test_file[]")
                })
            // AF flattens the array to "test_value[][]": the legacy AF name differs.
            #expect(af.fields.map(\.name) == ["test_value[][]", "test_value[][]"])
            let afFixed = try FormSnapshot(
                serializer.multipartFormRequest(
                    withMethod: "POST", urlString: Example.uploadURL.absoluteString, parameters: nil
                ) { form in
                    form.appendPart(withForm: Data("here".utf8), name: "test_value[]")
                    form.appendPart(withForm: Data("are".utf8), name: "test_value[]")
                    try form.appendPart(withFileURL: one, name: "test_file[]")
                    try form.appendPart(withFileURL: two, name: "test_file[]")
                })
            #expect(snapshotsMatch(asi, afFixed, tolerating: Example.acrossFacades))
            // Files swapped: even with part-order tolerance, order within one name counts.
            let swapped = try FormSnapshot(severalFiles(url: Example.uploadURL, values: ["here", "are"], files: [two.path, one.path]))
            #expect(!asi.matches(swapped, tolerating: .all))
        }
    }
}
