import FormDataKit
import Foundation

/// Resumable uploads for the manager's tasks (beyond AFNetworking, which started a dropped
/// upload again from its first byte): the same engine as
/// `FormDataRequest.shouldResumeInterruptedUploads` (see the ResumableUploads article).
extension AFHTTPSessionManager {
    /// Whether an upload whose connection is lost mid-body is resumed from the server's offset
    /// (Resumable Uploads for HTTP; off by default). Needs `CurlTransport` (the default on
    /// Linux) or `AsyncHTTPClientTransport`: with `URLSessionTransport` each task fails before
    /// sending, naming the setting.
    public var shouldResumeInterruptedUploads: Bool {
        get { settings.withLock { $0.resumesInterruptedUploads } }
        set { settings.withLock { $0.resumesInterruptedUploads = newValue } }
    }

    /// How many times one task resumes its upload before it fails (3 by default; each offset
    /// request counts once). Past it the task fails with a connection failure whose underlying
    /// error's domain is `FormDataKit.UploadResumption` and whose message names this setting.
    public var numberOfTimesToResumeUpload: Int {
        get { settings.withLock { $0.maximumUploadResumptions } }
        set { settings.withLock { $0.maximumUploadResumptions = max(0, newValue) } }
    }
}

/// Resumable uploads for AFNetworking 2's operations (see ``AFHTTPSessionManager/shouldResumeInterruptedUploads``).
extension AFURLConnectionOperation {
    /// Whether the operation's upload is resumed from the server's offset when its connection is
    /// lost mid-body (off by default; `CurlTransport` or `AsyncHTTPClientTransport` —
    /// `URLSessionTransport` fails the operation before sending, naming the setting).
    public var shouldResumeInterruptedUploads: Bool {
        get { state.withLock { $0.resumesInterruptedUploads } }
        set { state.withLock { $0.resumesInterruptedUploads = newValue } }
    }

    /// How many times one send of the operation resumes its upload before it fails (3 by default).
    public var numberOfTimesToResumeUpload: Int {
        get { state.withLock { $0.maximumUploadResumptions } }
        set { state.withLock { $0.maximumUploadResumptions = max(0, newValue) } }
    }
}

/// Resumable uploads for the operations an ``AFHTTPRequestOperationManager`` makes.
extension AFHTTPRequestOperationManager {
    /// Given to each operation the manager makes (see
    /// ``AFURLConnectionOperation/shouldResumeInterruptedUploads``); off by default.
    public var shouldResumeInterruptedUploads: Bool {
        get { settings.withLock { $0.resumesInterruptedUploads } }
        set { settings.withLock { $0.resumesInterruptedUploads = newValue } }
    }

    /// Given to each operation the manager makes (see
    /// ``AFURLConnectionOperation/numberOfTimesToResumeUpload``); 3 by default.
    public var numberOfTimesToResumeUpload: Int {
        get { settings.withLock { $0.maximumUploadResumptions } }
        set { settings.withLock { $0.maximumUploadResumptions = max(0, newValue) } }
    }
}
