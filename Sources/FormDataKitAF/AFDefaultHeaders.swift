import Foundation

/// The headers a new ``AFHTTPRequestSerializer`` starts with.
enum AFDefaultHeaders {
    /// `Accept-Language` from the preferred languages (`en-US;q=1, fr;q=0.9`, at most six, down to
    /// q=0.5) and, on macOS, AFNetworking's `User-Agent`. No `User-Agent` elsewhere: AFNetworking
    /// has no rule for other platforms, and the transport adds its own.
    static func make() -> [String: String] {
        var headers: [String: String] = [:]
        let language = acceptLanguage(Locale.preferredLanguages)
        if !language.isEmpty { headers["Accept-Language"] = language }
        if let agent = userAgent() { headers["User-Agent"] = agent }
        return headers
    }

    /// The `Accept-Language` value for `languages`, best first.
    static func acceptLanguage(_ languages: [String]) -> String {
        var components: [String] = []
        for (index, language) in languages.enumerated() {
            let q = Float(1.0) - Float(index) * Float(0.1)
            components.append("\(language);q=\(String(format: "%0.1g", Double(q)))")
            if q <= 0.5 { break }
        }
        return components.joined(separator: ", ")
    }

    /// `<executable>/<version> (Mac OS X <version>)` on macOS, nil elsewhere.
    static func userAgent() -> String? {
        #if os(macOS)
        let info = Bundle.main.infoDictionary ?? [:]
        let name = (info["CFBundleExecutable"] as? String) ?? (info["CFBundleIdentifier"] as? String)
            ?? ProcessInfo.processInfo.processName
        let version = (info["CFBundleShortVersionString"] as? String) ?? (info["CFBundleVersion"] as? String) ?? ""
        let agent = "\(name)/\(version) (Mac OS X \(ProcessInfo.processInfo.operatingSystemVersionString))"
        if agent.unicodeScalars.allSatisfy(\.isASCII) { return agent }
        return agent.applyingTransform(StringTransform("Any-Latin; Latin-ASCII; [:^ASCII:] Remove"), reverse: false)
        #else
        return nil
        #endif
    }
}
