import FormDataKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sending an AF 2 operation: each send (the first, or the one after ``resume()``) is one of the
/// façade adapter's, its events handled in order in the operation's callbacks.
extension AFURLConnectionOperation {
    /// Makes the operation run, from `phase` (ready, or paused), with a new send for the current
    /// attempt, made the current one in the same step (a cancel from then on reaches it); nil
    /// when the operation was not in `phase`.
    func run(from phase: Phase) -> FacadeSend? {
        state.withLock { state -> FacadeSend? in
            guard state.phase == phase else { return nil }
            state.phase = .executing
            let attempt = state.attempt
            let send = FacadeSend(transport: transport, callbacks: callbacks) { [self] event in
                callbacks.deliver { self.handle(event, attempt: attempt) }
            }
            state.send = send
            state.skipping = state.streamed
            return send
        }
    }

    /// Prepares ``request`` and starts `send` with it.
    func start(_ send: FacadeSend) {
        let (attempt, policy, credential) = state.withLock { ($0.attempt, $0.securityPolicy, $0.credential) }
        let resumption = state.withLock { ($0.resumesInterruptedUploads, $0.maximumUploadResumptions) }
        let prepared: AFPreparedRequest
        do {
            prepared = try AFPreparedRequest(request, additionalHeaders: nil, for: transport)
        } catch {
            send.abandon()
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
            send.abandon(bodyFile: prepared.spooledBody)
            return finish(.failure(error), attempt: attempt)
        }
        var options = FacadeSend.Options()
        options.retryPolicy = state.withLock { $0.retryPolicy }
        options.streamsResponseBody = true
        options.keepsResponseBody = state.withLock { $0.outputStream == nil }
        send.start(transportRequest, bodyFile: prepared.spooledBody, options: options)
    }

    private func handle(_ event: FacadeSend.Event, attempt: Int) {
        guard let send = state.withLock({ $0.attempt == attempt ? $0.send : nil }) else { return }
        switch event {
        case .uploadProgress(let progress):
            guard progress.delta > 0, let block = state.withLock({ $0.uploadProgress }) else { return }
            block(UInt(progress.delta), Int64(clamping: progress.sent), Int64(clamping: progress.total))
        case .retrying:
            break
        case .responseHead:
            let response = send.httpResponse
            state.withLock { $0.response = response }
        case .responseBody(let chunk, let received, let expected):
            self.received(chunk, received: received, expected: expected)
        case .finished(let result):
            finish(result.mapError { $0 as any Error }, attempt: attempt, response: send.httpResponse)
        }
    }

    /// Response body bytes, `received` of this response so far: to ``outputStream`` (skipping
    /// what a paused send already wrote) or kept by the send; the download block is told.
    private func received(_ chunk: Data, received: UInt64, expected: UInt64?) {
        let (block, stream, skip) = state.withLock { state in
            let skip = Int(min(Int64(chunk.count), state.skipping))
            state.skipping -= Int64(skip)
            if state.outputStream != nil { state.streamed += Int64(chunk.count - skip) }
            return (state.downloadProgress, state.outputStream, skip)
        }
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
        block?(UInt(chunk.count), Int64(clamping: received), expected.map { Int64(clamping: $0) } ?? -1)
    }

    /// Ends the operation (once): the response or the error recorded, ``outputStream`` closed,
    /// the finish notification posted, then `isFinished` set (the queue then runs `completionBlock`).
    func finish(_ result: Result<FormDataResponse, any Error>, attempt: Int, response: HTTPURLResponse? = nil) {
        let ended = state.withLock { state -> Bool in
            guard state.attempt == attempt, !state.ending else { return false }
            state.ending = true
            return true
        }
        guard ended else { return }
        state.withLock { state in
            switch result {
            case .success(let body):
                if state.outputStream == nil { state.responseData = body.body }
                if let response { state.response = response }
            case .failure(let error):
                state.error = AFNetworkError.reported(error)
            }
            state.outputStream?.close()
            state.send = nil
        }
        // Posted before `isFinished` turns true: whoever waited for the operation has seen it.
        NotificationCenter.default.post(name: .AFNetworkingOperationDidFinish, object: self)
        changing { $0.phase = .finished }
    }
}
