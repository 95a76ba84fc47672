import FormDataKit
import Foundation

/// Resumable uploads for the manager's tasks (beyond AFNetworking, which started a dropped
/// upload again from its first byte): the same engine as
/// `FormDataRequest.shouldResumeInterruptedUploads` (see the README's "Resumable uploads").
extension AFHTTPSessionManager {
    /// Whether an upload whose connection is lost mid-body is resumed from the server's offset
    /// (Resumable Uploads for HTTP; off by default). Needs ``CurlTransport`` (the default on
    /// Linux): with another transport each task fails before sending, naming the setting.
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
