import FormDataKit

extension AFURLConnectionOperation {
    /// The rules for sending the operation's request again after a failure (see `RetryPolicy`);
    /// nil (the default): never, as AFNetworking did not retry. A POST is sent again after its
    /// body went out only when it carries an `Idempotency-Key`
    /// (``AFHTTPRequestSerializer/shouldSendIdempotencyKey``).
    public var retryPolicy: RetryPolicy? {
        get { state.withLock { $0.retryPolicy } }
        set { state.withLock { $0.retryPolicy = newValue } }
    }
}

extension AFHTTPRequestOperationManager {
    /// The ``AFURLConnectionOperation/retryPolicy`` each operation the manager makes gets; nil
    /// (the default): no retries, as AFNetworking.
    public var retryPolicy: RetryPolicy? {
        get { settings.withLock { $0.retryPolicy } }
        set { settings.withLock { $0.retryPolicy = newValue } }
    }
}
