import FormDataKit
import FormDataKitAF
import FormDataKitTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The same form built through the ASI façade (`FormDataRequest`) and through the AF façade
/// (`AFHTTPRequestSerializer`) parses to the same fields and files — checked with the tests'
/// strict parser and with an independent one (Python's werkzeug).
@Suite("Side by side: FormDataRequest and AFHTTPRequestSerializer")
struct SideBySideTests {
    private struct Built {
        var body: Data
        var contentType: String
        var boundary: String
    }

    private func buildASI(file: URL) throws -> Built {
        let request = FormDataRequest(url: URL(string: "http://example.com/upload")!)
        request.setPostValue("Ben", forKey: "first_name")
        request.setPostValue("Copsey", forKey: "last_name")
        request.setPostValue(true, forKey: "subscribed")
        request.setPostValue("ünïcödé", forKey: "motto")
        request.addData(Data("raw bytes\r\n".utf8), withFileName: "notes.txt", andContentType: "text/plain", forKey: "notes")
        try request.addFile(file.path, forKey: "photo")
        try request.buildPostBody()
        let body: Data
        if let path = request.postBodyFilePath {
            body = try Data(contentsOf: URL(fileURLWithPath: path))
        } else {
            body = try #require(request.postBody)
        }
        let contentType = try #require(request.requestHeaders["Content-Type"])
        return Built(body: body, contentType: contentType, boundary: request.multipartBoundary)
    }

    private func buildAF(file: URL) throws -> Built {
        let serializer = AFHTTPRequestSerializer.serializer()
        let parameters: [String: Any] = ["first_name": "Ben", "last_name": "Copsey", "subscribed": true, "motto": "ünïcödé"]
        let request = try serializer.multipartFormRequest(
            withMethod: "POST", urlString: "http://example.com/upload", parameters: parameters
        ) { form in
            form.appendPart(withFileData: Data("raw bytes\r\n".utf8), name: "notes", fileName: "notes.txt", mimeType: "text/plain")
            try form.appendPart(withFileURL: file, name: "photo")
        }
        let contentType = try #require(request.value(forHTTPHeaderField: "Content-Type"))
        let boundary = try #require(contentType.components(separatedBy: "boundary=").last)
        let body = try TestSupport.body(of: request)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(body.count))
        return Built(body: body, contentType: contentType, boundary: boundary)
    }

    private func withPhoto<T>(_ body: (URL) throws -> T) throws -> T {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = try TestSupport.write(Data((0..<70_000).map { UInt8($0 % 256) }), named: "photo.jpg", in: directory)
        return try body(photo)
    }

    /// The parts as (name, file name, content type, content), sorted by name: the order of the
    /// value fields differs (ASI keeps insertion order, AF sorts parameter keys).
    private func semanticParts(_ built: Built) throws -> [String] {
        try ParsedMultipart(built.body, boundary: built.boundary).parts
            .map { "\($0.name ?? "-")|\($0.fileName ?? "-")|\($0.header("Content-Type") ?? "-")|\($0.content.base64EncodedString())" }
            .sorted()
    }

    @Test func strictParserSeesTheSameFieldsAndFiles() throws {
        try withPhoto { photo in
            let asi = try buildASI(file: photo)
            let af = try buildAF(file: photo)
            #expect(asi.boundary != af.boundary)
            #expect(try semanticParts(asi) == semanticParts(af))
            #expect(try semanticParts(af).count == 6)
        }
    }

    @Test func formDataKitTestingParserSeesTheSameFieldsAndFiles() throws {
        try withPhoto { photo in
            let asiBuilt = try buildASI(file: photo)
            let afBuilt = try buildAF(file: photo)
            let asi = try FormBodyParser.parse(asiBuilt.body, contentType: asiBuilt.contentType, expectedLength: asiBuilt.body.count)
            let af = try FormBodyParser.parse(afBuilt.body, contentType: afBuilt.contentType, expectedLength: afBuilt.body.count)
            #expect(asi.fields.sorted { $0.name < $1.name } == af.fields.sorted { $0.name < $1.name })
            #expect(asi.files == af.files)
            #expect(af.value("subscribed") == "1")
            #expect(af.file("photo")?.size == 70_000)
        }
    }

    @Test func werkzeugSeesTheSameFieldsAndFiles() async throws {
        let directory = try TestSupport.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = try TestSupport.write(Data((0..<70_000).map { UInt8($0 % 256) }), named: "photo.jpg", in: directory)
        let asiBuilt = try buildASI(file: photo)
        let afBuilt = try buildAF(file: photo)
        let asi = try await WerkzeugForm.parse(asiBuilt.body, contentType: asiBuilt.contentType)
        let af = try await WerkzeugForm.parse(afBuilt.body, contentType: afBuilt.contentType)
        let sortedForm = { (form: WerkzeugForm) in form.form.sorted { $0[0] < $1[0] } }
        #expect(sortedForm(asi) == sortedForm(af))
        #expect(asi.files == af.files)
        #expect(sortedForm(af).contains(["motto", "ünïcödé"]))
        #expect(sortedForm(af).contains(["subscribed", "1"]))
        #expect(af.files.count == 2)
        #expect(af.files.first?["notes"]?.base64 == Data("raw bytes\r\n".utf8).base64EncodedString())
        #expect(af.files.last?["photo"]?.contentType == "image/jpeg")
    }

    @Test func samePartsInTheSameOrderGiveIdenticalBytesWithTheSameBoundary() throws {
        try withPhoto { photo in
            let asiRequest = FormDataRequest(url: URL(string: "http://example.com/upload")!)
            asiRequest.multipartBoundary = TestSupport.boundary
            asiRequest.setPostValue("1", forKey: "a")
            asiRequest.addData(Data("hi".utf8), withFileName: "f.txt", andContentType: "text/plain", forKey: "file")
            try asiRequest.addFile(photo.path, withFileName: "photo.jpg", andContentType: "image/jpeg", forKey: "photo")
            try asiRequest.buildPostBody()
            let asiBody =
                try asiRequest.postBodyFilePath.map { try Data(contentsOf: URL(fileURLWithPath: $0)) } ?? asiRequest.postBody ?? Data()

            let serializer = AFHTTPRequestSerializer.serializer()
            serializer.multipartBoundary = TestSupport.boundary
            let afRequest = try serializer.multipartFormRequest(
                withMethod: "POST", urlString: "http://example.com/upload", parameters: ["a": "1"]
            ) { form in
                form.appendPart(withFileData: Data("hi".utf8), name: "file", fileName: "f.txt", mimeType: "text/plain")
                try form.appendPart(withFileURL: photo, name: "photo")
            }
            #expect(try TestSupport.body(of: afRequest) == asiBody)
            #expect(asiRequest.postLength == UInt64(asiBody.count))
        }
    }
}
