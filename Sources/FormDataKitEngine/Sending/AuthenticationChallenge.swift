import FormDataKitBody
import FormDataKitWire
import Foundation

/// Reading `WWW-Authenticate` and `Proxy-Authenticate` values: which schemes a server offers.
enum AuthenticationChallenge {
    /// The schemes a transport that answers challenges can answer, most secure first.
    static let answerable = ["Negotiate", "NTLM", "Digest", "Basic"]

    /// The scheme names a challenge value offers, in order, with their canonical spelling when
    /// one of ``answerable`` (`digest realm="a", nonce="b", Basic realm="c"` → `Digest`, `Basic`).
    /// Several challenges may share one value (a repeated header joined with `, `).
    /// - Parameter value: the header's value.
    /// - Returns: the schemes offered, each once.
    static func schemes(in value: String) -> [String] {
        var schemes: [String] = []
        for piece in splitOutsideQuotes(value) {
            let trimmed = piece.trimmingCharacters(in: .whitespaces)
            let word = String(trimmed.prefix { $0 != " " && $0 != "=" })
            // `name=value` (or `token68=`) is a parameter of the challenge before it.
            guard !word.isEmpty, trimmed.dropFirst(word.count).first != "=" else { continue }
            let scheme = answerable.first { $0.equalsIgnoringASCIICase(word) } ?? word
            if !schemes.contains(scheme) { schemes.append(scheme) }
        }
        return schemes
    }

    /// ``FormDataError/authenticationNeeded(underlying:)`` for a 401 or 407 `head` that is the
    /// answer (ASIHTTPRequest's category), naming the scheme (and realm) the challenge asks for,
    /// so "Digest" or "NTLM" tells what to give.
    /// - Parameter head: the 401 or 407 response's head.
    /// - Returns: the error.
    static func authenticationNeeded(_ head: TransportResponseHead) -> FormDataError {
        let challenge = head.header(head.statusCode == 407 ? "Proxy-Authenticate" : "WWW-Authenticate")
        let asked =
            challenge.map { value -> String in
                let realm = AuthenticationOutcome.realm(in: value).map { ", realm \"\($0)\"" } ?? ""
                let who = head.statusCode == 407 ? "the proxy" : "the server"
                return " (\(who) asks for \(AuthenticationOutcome.scheme(of: value))\(realm))"
            } ?? ""
        return .authenticationNeeded(underlying: UnderlyingError(domain: "HTTP", code: head.statusCode, message: head.statusLine + asked))
    }

    /// `value` split at commas that are not inside a quoted string.
    private static func splitOutsideQuotes(_ value: String) -> [Substring] {
        var pieces: [Substring] = []
        var start = value.startIndex
        var quoted = false
        var escaped = false
        for index in value.indices {
            let character = value[index]
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                pieces.append(value[start..<index])
                start = value.index(after: index)
            }
        }
        pieces.append(value[start...])
        return pieces
    }
}

extension AuthenticationOutcome {
    /// How a send of `request` authenticated: the scheme answered last (pre-emptive Basic, or
    /// the most secure one the last challenge offered and the request allows), the realm of the
    /// last challenge, and how many times the body was sent again to answer one.
    /// - Parameters:
    ///   - request: the request of the exchange that answered.
    ///   - answersChallenges: whether the transport answers challenges itself.
    ///   - lastChallenge: the last `WWW-Authenticate` or `Proxy-Authenticate` value, if any.
    ///   - retries: how many times the body was sent again to answer a challenge.
    init(of request: TransportRequest, answersChallenges: Bool, lastChallenge: String?, retries: Int) {
        var scheme: String?
        let network = request.network
        if answersChallenges, network.credentials != nil {
            if network.challengeSchemes.isEmpty && network.presentsCredentialsBeforeChallenge {
                scheme = "Basic"
            } else {
                let offered = lastChallenge.map(AuthenticationChallenge.schemes(in:)) ?? []
                let allowed = network.challengeSchemes.isEmpty ? AuthenticationChallenge.answerable : network.challengeSchemes
                scheme = AuthenticationChallenge.answerable.first { allowed.contains($0) && offered.contains($0) }
            }
        }
        self.init(scheme: scheme, realm: lastChallenge.flatMap(AuthenticationOutcome.realm(in:)), retryCount: retries)
    }
}
