import FormDataKit

extension AFHTTPSessionManager {
    /// The rules for sending a task's request again after a failure (see `RetryPolicy`: a failed
    /// connect always, after the connection only for idempotent methods or requests with an
    /// `Idempotency-Key` — ``AFHTTPRequestSerializer/shouldSendIdempotencyKey`` — never once a
    /// response began, `429`/`503` with `Retry-After` when asked); nil (the default): never, as
    /// AFNetworking and URLSession did not retry.
    public var retryPolicy: RetryPolicy? {
        get { settings.withLock { $0.retryPolicy } }
        set { settings.withLock { $0.retryPolicy = newValue } }
    }
}
