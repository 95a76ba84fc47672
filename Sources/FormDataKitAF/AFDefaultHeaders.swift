import Foundation
#if os(iOS) || os(tvOS)
import UIKit
#elseif os(watchOS)
import WatchKit
#endif

/// The headers a new ``AFHTTPRequestSerializer`` starts with.
enum AFDefaultHeaders {
    /// `Accept-Language` from the preferred languages (`en-US;q=1, fr;q=0.9`, at most six, down to
    /// q=0.5) and, on Apple platforms, AFNetworking's `User-Agent`. No `User-Agent` elsewhere:
    /// AFNetworking has no rule for other platforms; the send adds FormDataKit's default to a
    /// request without one (`AFPreparedRequest`).
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

    /// AFNetworking's `User-Agent` for this platform, ASCII only (other characters transliterated
    /// as AFNetworking did), or nil off Apple platforms:
    /// - macOS: `<executable>/<version> (Mac OS X <operatingSystemVersionString>)`;
    /// - iOS: `<executable>/<version> (<device model>; iOS <systemVersion>; Scale/<screen scale, %0.2f>)`;
    /// - tvOS: the same with `tvOS`; watchOS: the watch's model, `watchOS` and its screen scale.
    static func userAgent() -> String? {
        #if os(macOS) || os(iOS) || os(tvOS) || os(watchOS)
        let info = Bundle.main.infoDictionary ?? [:]
        let name =
            (info["CFBundleExecutable"] as? String) ?? (info["CFBundleIdentifier"] as? String)
            ?? ProcessInfo.processInfo.processName
        let version = (info["CFBundleShortVersionString"] as? String) ?? (info["CFBundleVersion"] as? String) ?? ""
        let agent = "\(name)/\(version) (\(platformDescription()))"
        if agent.unicodeScalars.allSatisfy(\.isASCII) { return agent }
        return agent.applyingTransform(StringTransform("Any-Latin; Latin-ASCII; [:^ASCII:] Remove"), reverse: false)
        #else
        return nil
        #endif
    }

    #if os(macOS)
    /// `Mac OS X <operatingSystemVersionString>`.
    static func platformDescription() -> String {
        "Mac OS X \(ProcessInfo.processInfo.operatingSystemVersionString)"
    }
    #elseif os(iOS) || os(tvOS) || os(watchOS)
    /// `<model>; <system> <version>; Scale/<scale>`, read from UIKit (WatchKit on watchOS) on the
    /// main thread: at once when called there, else by a synchronous hop to the main queue.
    static func platformDescription() -> String {
        if Thread.isMainThread { return MainActor.assumeIsolated { mainThreadPlatformDescription() } }
        return DispatchQueue.main.sync { MainActor.assumeIsolated { mainThreadPlatformDescription() } }
    }

    @MainActor
    private static func mainThreadPlatformDescription() -> String {
        #if os(watchOS)
        let device = WKInterfaceDevice.current()
        return "\(device.model); watchOS \(device.systemVersion); Scale/\(String(format: "%0.2f", Double(device.screenScale)))"
        #else
        let device = UIDevice.current
        #if os(tvOS)
        let system = "tvOS"
        #else
        let system = "iOS"
        #endif
        return "\(device.model); \(system) \(device.systemVersion); Scale/\(String(format: "%0.2f", Double(UIScreen.main.scale)))"
        #endif
    }
    #endif
}
