#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AFHTTPRequestSerializer {
    /// A multipart/form-data request: the request ``request(withMethod:urlString:parameters:)``
    /// makes with no parameters, whose body is the flattened `parameters` as form fields (first,
    /// names like `user[name]` and `ids[]`, values in ``stringEncoding``) followed by the parts
    /// `block` appends. The body is an ``AFMultipartBodyStream`` with AFNetworking's bytes
    /// (`Boundary+XXXXXXXXXXXXXXXX`, Content-Disposition then Content-Type, no charset);
    /// `Content-Type: multipart/form-data; boundary=…` and the exact `Content-Length` are set.
    /// With no parts at all the request is returned without a body stream, as AFNetworking did.
    ///
    /// ```swift
    /// let request = try serializer.multipartFormRequest(
    ///     withMethod: "POST", urlString: "https://example.com/upload", parameters: ["a": "1"]
    /// ) { form in
    ///     form.appendPart(withFileData: Data("hi".utf8), name: "file", fileName: "f.txt", mimeType: "text/plain")
    ///     try form.appendPart(withFileURL: URL(fileURLWithPath: "/tmp/photo.jpg"), name: "photo")
    /// }
    /// ```
    ///
    /// On Linux, do not hand this request to `URLSession` directly: a body stream goes out chunked,
    /// and with a Content-Length as well (a corelibs bug). Send it with
    /// `AFHTTPSessionManager.uploadTask(withStreamedRequest:progress:completionHandler:)` or an
    /// `AFHTTPRequestOperation` (these bytes, their exact length, no file); or write it to a file
    /// with ``request(withMultipartForm:writingStreamContentsToFile:completionHandler:)`` and
    /// upload the file; or use the engine's `BodySource` (``AFMultipartBodyStream/bodySource``).
    ///
    /// - Throws: ``AFURLRequestSerializationError/multipartMethodNotAllowed(_:)`` for GET or HEAD,
    ///   the first error an append raised (AFNetworking dropped such parts silently), errors thrown
    ///   by `block`, and `FormDataError.unencodableString` for a parameter ``stringEncoding`` cannot
    ///   represent.
    /// - Parameters:
    ///   - method: the HTTP method; GET and HEAD are refused.
    ///   - urlString: the URL, parsed as ``request(withMethod:urlString:parameters:)`` parses it.
    ///   - parameters: form fields, flattened as AFNetworking flattens them; nil for none.
    ///   - block: appends the parts (files, data, streams) to the form; nil for none.
    /// - Returns: the request with its multipart body stream and headers.
    public func multipartFormRequest(
        withMethod method: String, urlString: String, parameters: [String: Any]?,
        constructingBodyWith block: ((any AFMultipartFormData) throws -> Void)?
    ) throws -> URLRequest {
        let upper = method.uppercased()
        guard upper != "GET", upper != "HEAD" else { throw AFURLRequestSerializationError.multipartMethodNotAllowed(method) }
        let request = try self.request(withMethod: method, urlString: urlString, parameters: nil)
        let current = settings.current
        let formData = AFStreamingMultipartFormData(request: request, boundary: current.multipartBoundary)
        for pair in AFQueryStringPair.pairs(key: nil, value: parameters ?? [:]) {
            let name = pair.field ?? ""
            let data: Data
            if let value = pair.value {
                if let bytes = value as? Data {
                    data = bytes
                } else {
                    data = try IANACharset.encode(
                        AFParameterValue.describe(value), current.stringEncoding, field: name, role: .value)
                }
            } else {
                data = Data()
            }
            formData.appendPart(withForm: data, name: name)
        }
        try block?(formData)
        return try formData.requestByFinalizingMultipartFormData()
    }

    /// Writes the multipart body of `request` to `fileURL` in the background and returns at once
    /// a copy of `request` without the body stream, keeping its multipart `Content-Type` and
    /// `Content-Length` — ready for `uploadTask(with:fromFile:)`, which sends an exact
    /// Content-Length (what S3 and others need). `completionHandler` runs on a background queue
    /// (not the main queue) with nil, or the error; a partly written file is removed.
    ///
    /// Errors: ``AFURLRequestSerializationError/notMultipartRequest`` when the request's body is
    /// not an ``AFMultipartBodyStream``, ``AFURLRequestSerializationError/notFileURL(_:)``, or the
    /// `FormDataError` of a failed read or write.
    /// - Parameters:
    ///   - request: a request made by ``multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:)``.
    ///   - fileURL: a `file:` URL; the file is written atomically with mode 0600.
    ///   - completionHandler: called once the file is written (nil) or writing failed (the error).
    /// - Returns: the request without its body stream, ready to upload the file.
    public func request(
        withMultipartForm request: URLRequest, writingStreamContentsToFile fileURL: URL,
        completionHandler: (@Sendable ((any Error)?) -> Void)?
    ) -> URLRequest {
        var result = request
        result.httpBodyStream = nil
        let job = Self.writeJob(for: request, to: fileURL)
        DispatchQueue.sharedGlobal.async {
            let error = job()
            completionHandler?(error)
        }
        return result
    }

    /// ``request(withMultipartForm:writingStreamContentsToFile:completionHandler:)`` for async
    /// code: returns the request once the file is written, or throws what failed.
    /// - Parameters:
    ///   - request: a request made by ``multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:)``.
    ///   - fileURL: a `file:` URL; the file is written atomically with mode 0600.
    /// - Returns: the request without its body stream, ready to upload the file.
    /// - Throws: ``AFURLRequestSerializationError/notMultipartRequest``,
    ///   ``AFURLRequestSerializationError/notFileURL(_:)``, or the `FormDataError` of a failed read or write.
    public func request(withMultipartForm request: URLRequest, writingStreamContentsToFile fileURL: URL) async throws -> URLRequest {
        var result = request
        result.httpBodyStream = nil
        let job = Self.writeJob(for: request, to: fileURL)
        let error: (any Error)? = await withCheckedContinuation { continuation in
            DispatchQueue.sharedGlobal.async { continuation.resume(returning: job()) }
        }
        if let error { throw error }
        return result
    }

    /// The work of writing `request`'s body to `fileURL`, as a Sendable closure returning the
    /// error, if any (it captures the body, not the stream).
    private static func writeJob(for request: URLRequest, to fileURL: URL) -> @Sendable () -> (any Error)? {
        guard let stream = request.httpBodyStream as? AFMultipartBodyStream else {
            return { AFURLRequestSerializationError.notMultipartRequest }
        }
        guard fileURL.isFileURL else { return { AFURLRequestSerializationError.notFileURL(fileURL) } }
        let source = stream.bodySource
        let keepAlive = stream.retainedTemporaryFiles
        let path = fileURL.path
        return {
            defer { withExtendedLifetime(keepAlive) {} }
            // All or nothing, as FormDataKit writes any caller's path: a 0600 sibling created
            // with O_EXCL (never through a link), renamed over `path` once complete; on failure
            // the sibling goes and whatever was at `path` stays.
            do {
                try DestinationFile.write(to: path) { (sink) throws(FormDataError) in
                    let reader = source.makeReader(chunkSize: 256 << 10)
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
                    defer { buffer.deallocate() }
                    while true {
                        let count = try reader.read(into: buffer)
                        if count == 0 { break }
                        try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    }
                }
            } catch {
                return error
            }
            return nil
        }
    }
}
