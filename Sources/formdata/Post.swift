import ArgumentParser
import FormDataKit
import Foundation

/// `formdata post`: a curl-like form upload.
struct Post: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a form, curl style.",
        discussion: """
            -F name=value adds a value field; -F name=@path[;type=TYPE][;filename=NAME] adds a file.
            -F name=@- streams standard input as a file part (filename "-" unless filename= is given),
            sent chunked: its length is not known. -F name=<path (or <- for standard input) sends the
            file's text as a value field (read whole first, as curl does).
            The body is multipart/form-data unless --urlencoded is given. The response body goes to
            standard output, the status line and headers to standard error.
            """)

    @Argument(help: "The URL to post to.")
    var url: String

    @Option(name: .customShort("F"), help: "A form field: name=value or name=@path[;type=..][;filename=..].")
    var fields: [String] = []

    @Flag(name: .long, help: "Compress the body with gzip (Content-Encoding: gzip).")
    var gzip = false

    @Flag(name: .long, help: "Send application/x-www-form-urlencoded (no files).")
    var urlencoded = false

    @Option(name: .customLong("header"), help: "An extra header, 'Name: value'.")
    var headers: [String] = []

    @Flag(name: .long, help: "Print the debug body log to standard error.")
    var debug = false

    @Flag(name: .long, help: "Show a progress bar on standard error.")
    var progress = false

    @Option(name: .long, help: "Seconds without traffic before giving up.")
    var timeout: Double = FormDataRequest.defaultTimeOutSeconds

    @Option(name: .customLong("user"), help: "Basic authentication, user:password.")
    var user: String?

    @Option(
        name: .long,
        help:
            "The transport: curl (the system libcurl; streams the body, no temporary file), urlsession or asynchttpclient (streams too; a build with the AsyncHTTPClient trait). Default: curl on Linux, urlsession elsewhere."
    )
    var transport: TransportChoice = .platformDefault

    @Option(
        name: .customLong("pinned-cert"), help: "A PEM or DER certificate to trust as the only trust anchor (curl and asynchttpclient).")
    var pinnedCert: String?

    @Flag(name: .long, help: "Send with startSynchronous() (ASI style, blocking the calling thread) instead of async start().")
    var synchronous = false

    @OptionGroup(title: "Network (curl's flag names; the curl transport applies them all)")
    var network: NetworkFlags

    func run() async throws {
        try await transport.withTransport(pinnedCertificate: pinnedCert, cookieJarFile: network.cookieJar) { transport in
            try await send(with: transport)
        }
    }

    /// `--user`'s (or `flag`'s) `user[:password]`, split at the first colon (the password may
    /// hold colons).
    /// - Throws: `ValidationError` for an empty user name (`""`, `:`, `:password`).
    static func credentials(_ option: String, flag: String = "--user") throws -> (user: String, password: String) {
        let colon = option.firstIndex(of: ":")
        let name = String(option[..<(colon ?? option.endIndex)])
        let password = colon.map { String(option[option.index(after: $0)...]) } ?? ""
        guard !name.isEmpty else {
            throw ValidationError("\(flag) needs a user name: \(flag) user[:password] (got \(option.debugDescription))")
        }
        return (name, password)
    }

    private func send(with transport: any FormDataTransport) async throws {
        guard let target = URL(string: url), target.scheme != nil else {
            throw ValidationError("Not a URL: \(url)")
        }
        let request = FormDataRequest(url: target)
        request.transport = transport
        request.postFormat = urlencoded ? .urlEncoded : .multipartFormData
        for field in fields { try FieldSpec.parse(field).add(to: request, urlencoded: urlencoded) }
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else { throw ValidationError("Bad header (want 'Name: value'): \(header)") }
            request.addRequestHeader(
                String(header[..<colon]).trimmingCharacters(in: .whitespaces),
                value: String(header[header.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        if let user {
            let (name, password) = try Self.credentials(user)
            request.username = name
            request.password = password
        }
        try network.apply(to: request)
        request.shouldCompressRequestBody = gzip
        request.shouldLogDebugBody = debug
        request.timeOutSeconds = timeout
        let bar = ProgressBar(enabled: progress || isatty(2) != 0)
        request.bytesSentBlock = { _, _ in bar.update(request.uploadProgress) }

        let response: FormDataResponse
        do {
            if synchronous {
                // On the main thread, as ported ASI code usually calls it.
                _ = await MainActor.run { request.startSynchronous() }
                if let error = request.error { throw error }
                var answered = FormDataResponse(
                    statusCode: request.responseStatusCode, headers: request.responseHeaders ?? [:],
                    body: request.responseData ?? Data())
                answered.httpVersion = request.responseHTTPVersion
                response = answered
            } else {
                response = try await request.start()
            }
        } catch let error as FormDataError {
            bar.finish()
            FileHandle.standardError.write(Data(ResponseOutput.failure(error).utf8))
            throw ExitCode(Int32(clamping: 10 + error.asiErrorCode))
        }
        bar.finish()
        // What the server sent is escaped on the terminal (ResponseOutput); a piped body is kept as it is.
        FileHandle.standardError.write(Data(ResponseOutput.head(response).utf8))
        let toTerminal = isatty(1) != 0
        FileHandle.standardOutput.write(ResponseOutput.body(response.body, toTerminal: toTerminal))
        if !toTerminal && !response.body.isEmpty && response.body.last != 0x0A { print("") }
        if response.statusCode >= 400 { throw ExitCode(22) }
    }
}

/// One `-F` argument.
struct FieldSpec {
    var name: String
    var value: String?
    var filePath: String?
    var contentType: String?
    var fileName: String?

    static func parse(_ text: String) throws -> FieldSpec {
        guard let equals = text.firstIndex(of: "=") else { throw ValidationError("Bad -F (want name=value or name=@path): \(text)") }
        let name = String(text[..<equals])
        let rest = String(text[text.index(after: equals)...])
        if rest.hasPrefix("<") {
            let path = String(rest.dropFirst())
            guard let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: path)
            else { throw ValidationError("Cannot read \(path) for -F \(name)=<\(path)") }
            return FieldSpec(name: name, value: String(decoding: data, as: UTF8.self))
        }
        guard rest.hasPrefix("@") else { return FieldSpec(name: name, value: rest) }
        let pieces = rest.dropFirst().split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        var spec = FieldSpec(name: name, filePath: pieces[0])
        for option in pieces.dropFirst() {
            if option.hasPrefix("type=") {
                spec.contentType = String(option.dropFirst(5))
            } else if option.hasPrefix("filename=") {
                spec.fileName = String(option.dropFirst(9))
            } else {
                throw ValidationError("Unknown -F option '\(option)' in \(text)")
            }
        }
        return spec
    }

    func add(to request: FormDataRequest, urlencoded: Bool) throws {
        if let filePath {
            if urlencoded { throw ValidationError("--urlencoded cannot send files (\(name)=@\(filePath))") }
            if filePath == "-" {
                // Standard input as it comes: a pipe has no length, so the body goes chunked.
                guard let input = InputStream(fileAtPath: "/dev/stdin") else { throw ValidationError("Cannot read standard input") }
                request.addStream(input, withFileName: fileName ?? "-", andContentType: contentType, forKey: name)
                return
            }
            try request.addFile(filePath, withFileName: fileName, andContentType: contentType, forKey: name)
        } else {
            request.addPostValue(value ?? "", forKey: name)
        }
    }
}

/// A one-line progress bar on standard error, redrawn at most every 1 %.
final class ProgressBar: Sendable {
    private let enabled: Bool
    private let lastPercent = Locked(-1)

    init(enabled: Bool) { self.enabled = enabled }

    func update(_ progress: Progress) {
        guard enabled else { return }
        let percent = Int(progress.fractionCompleted * 100)
        guard exchange(percent) != percent else { return }
        let width = 40
        let filled = min(width, percent * width / 100)
        let line =
            "\r[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            + "] \(percent)% \(progress.completedUnitCount)/\(progress.totalUnitCount) bytes"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Stores `newValue` as the last drawn percentage and returns the previous one.
    private func exchange(_ newValue: Int) -> Int {
        lastPercent.withLock { value in
            defer { value = newValue }
            return value
        }
    }

    func finish() {
        if enabled && exchange(-1) >= 0 { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
