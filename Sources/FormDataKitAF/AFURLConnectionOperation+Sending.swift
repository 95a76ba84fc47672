import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sending an AF 2 operation: through FormDataKit's send driver, its events handled in order on
/// the operation's mailbox.
extension AFURLConnectionOperation {
    /// Starts one send of ``request`` (the first, or the one after ``resume()``).
    func send() {
        let (attempt, policy, credential) = state.withLock { state -> (Int, AFSecurityPolicy, URLCredential?) in
            state.totalWritten = 0
            state.totalRead = 0
            state.expectedRead = -1
            state.skipping = state.streamed
            return (state.attempt, state.securityPolicy, state.credential)
        }
        let resumption = state.withLock { ($0.resumesInterruptedUploads, $0.maximumUploadResumptions) }
        let prepared: AFPreparedRequest
        do {
            prepared = try AFPreparedRequest(request, additionalHeaders: nil, for: transport)
        } catch {
            return finish(.failure(error), attempt: attempt)
        }
        var transportRequest = prepared.request
        do {
            try policy.apply(to: &transportRequest, sentBy: transport)
            (transportRequest.network.resumesInterruptedUploads, transportRequest.network.maximumUploadResumptions) = resumption
            if let user = credential?.user {
                transportRequest.network.credentials = .init(user: user, password: credential?.password ?? "")
            }
        } catch {
            prepared.spooledBody?.remove()
            return finish(.failure(error), attempt: attempt)
        }
        let bodyLength = Int64(clamping: transportRequest.body.length)
        let driver = SendDriver(
            request: transportRequest, transport: transport, bodyFile: prepared.spooledBody,
            retryPolicy: state.withLock { $0.retryPolicy },
            onResponseBody: { [self] chunk in events.post { self.received(chunk, attempt: attempt) } },
            keepsResponseBody: state.withLock { $0.outputStream == nil }
        ) { [self] event in events.post { self.handle(event, attempt: attempt, bodyLength: bodyLength) } }
        let current = state.withLock { state -> Bool in
            guard state.attempt == attempt, state.phase == .executing else { return false }
            state.driver = driver
            return true
        }
        // Paused or cancelled meanwhile: this send is not the current one.
        if !current || isCancelled { driver.cancel() }
        driver.start()
    }

    private func handle(_ event: SendDriver.Event, attempt: Int, bodyLength: Int64) {
        guard state.withLock({ $0.attempt == attempt }) else { return }
        switch event {
        case .progress(let delta):
            let (block, total) = state.withLock { state -> (UploadProgressBlock?, Int64) in
                state.totalWritten = delta < 0 ? 0 : state.totalWritten + delta
                return (state.uploadProgress, state.totalWritten)
            }
            if delta > 0 { block?(UInt(delta), total, bodyLength) }
        case .retrying:
            break
        case .responseHead(let head):
            let response = HTTPURLResponse(
                url: request.url ?? URL(fileURLWithPath: "/"), statusCode: head.statusCode, httpVersion: "HTTP/1.1",
                headerFields: head.headers)
            state.withLock { state in
                state.response = response
                state.totalRead = 0
                state.expectedRead = head.header("Content-Length").flatMap { Int64($0) } ?? -1
            }
        case .finished(let result, _):
            finish(result.mapError { $0 as any Error }, attempt: attempt)
        }
    }

    /// Response body bytes: to ``outputStream`` (skipping what a paused send already wrote) or
    /// kept by the driver; the download block is told.
    private func received(_ chunk: Data, attempt: Int) {
        let (block, total, expected, stream, skip) = state.withLock { state in
            guard state.attempt == attempt else { return (DownloadProgressBlock?.none, Int64(0), Int64(0), OutputStream?.none, 0) }
            state.totalRead += Int64(chunk.count)
            let skip = Int(min(Int64(chunk.count), state.skipping))
            state.skipping -= Int64(skip)
            if state.outputStream != nil { state.streamed += Int64(chunk.count - skip) }
            return (state.downloadProgress, state.totalRead, state.expectedRead, state.outputStream, skip)
        }
        guard total > 0 else { return }
        if let stream, skip < chunk.count {
            chunk.dropFirst(skip).withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = stream.write(
                        bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset, maxLength: bytes.count - offset)
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
        block?(UInt(chunk.count), total, expected)
    }

    /// Ends the operation (once): the response or the error recorded, ``outputStream`` closed,
    /// the finish notification posted, then `isFinished` set (the queue then runs `completionBlock`).
    func finish(_ result: Result<FormDataResponse, any Error>, attempt: Int) {
        let ended = state.withLock { state -> Bool in
            guard state.attempt == attempt, !state.ending else { return false }
            state.ending = true
            return true
        }
        guard ended else { return }
        state.withLock { state in
            switch result {
            case .success(let response):
                if state.outputStream == nil { state.responseData = response.body }
                if let url = request.url {
                    state.response = HTTPURLResponse(
                        url: response.url ?? url, statusCode: response.statusCode, httpVersion: "HTTP/1.1", headerFields: response.headers)
                }
            case .failure(let error):
                state.error = (error as? FormDataError).flatMap(AFNetworkError.init) ?? error
            }
            state.outputStream?.close()
            state.driver = nil
        }
        // Posted before `isFinished` turns true: whoever waited for the operation has seen it.
        NotificationCenter.default.post(name: .AFNetworkingOperationDidFinish, object: self)
        changing { $0.phase = .finished }
    }
}
