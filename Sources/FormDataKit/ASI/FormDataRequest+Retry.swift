import Foundation

/// Retries that never post twice: the `Idempotency-Key` header and the retry policy.
extension FormDataRequest {
    /// Whether the request carries an `Idempotency-Key` header made for it
    /// (`IdempotencyKey.make()`, a quoted random UUID); false by default. The key is made when
    /// the request is first sent and kept in ``idempotencyKey``, so every copy of this logical
    /// request — a retry, a redirect or challenge answered by sending again, a resumed upload, a
    /// later send of the same object, a ``copy()`` — carries the same key.
    public var shouldSendIdempotencyKey: Bool {
        get { sending.withLock { $0.settings.shouldSendIdempotencyKey } }
        set { sending.withLock { $0.settings.shouldSendIdempotencyKey = newValue } }
    }

    /// The request's `Idempotency-Key`: set by the caller (sent as a Structured Field string —
    /// quoted, see `IdempotencyKey.headerValue(for:)`), or the one made for
    /// ``shouldSendIdempotencyKey`` at the first send; nil (the default): none, unless asked for.
    /// A key that is empty or not printable ASCII fails the send with
    /// `FormDataError.invalidRequestHeader(name:value:)` before anything is sent. An
    /// `Idempotency-Key` set with ``addRequestHeader(_:value:)`` is sent as it is instead.
    public var idempotencyKey: String? {
        get { sending.withLock { $0.settings.idempotencyKey } }
        set { sending.withLock { $0.settings.idempotencyKey = newValue } }
    }

    /// The rules for sending the request again after a failure (see `RetryPolicy`); nil (the
    /// default): ASIHTTPRequest's — ``numberOfTimesToRetryOnTimeout`` immediate retries of a
    /// timeout, whatever the method and however far the body got. When set, the policy decides
    /// every retry (``retryCount`` counts them all) and ``numberOfTimesToRetryOnTimeout`` is not used.
    public var retryPolicy: RetryPolicy? {
        get { sending.withLock { $0.settings.retryPolicy } }
        set { sending.withLock { $0.settings.retryPolicy = newValue } }
    }

    /// The `Idempotency-Key` value the next send carries, made (and kept) now when asked for;
    /// nil when none.
    func idempotencyHeaderValue() throws(FormDataError) -> String? {
        let key = sending.withLock { state -> String? in
            if state.settings.shouldSendIdempotencyKey, state.settings.idempotencyKey == nil {
                state.settings.idempotencyKey = IdempotencyKey.make()
            }
            return state.settings.idempotencyKey
        }
        guard let key else { return nil }
        return try IdempotencyKey.headerValue(for: key)
    }
}
