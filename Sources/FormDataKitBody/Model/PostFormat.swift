import FormDataKitWire

/// How a `FormDataRequest` encodes its body (ASIHTTPRequest's `ASIPostFormat`).
public enum PostFormat: Sendable, Equatable {
    /// `multipart/form-data`: used whenever the form has a file or data field.
    case multipartFormData
    /// `application/x-www-form-urlencoded`: the default for forms with values only.
    case urlEncoded
}
