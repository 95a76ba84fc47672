import FormDataKitWire

extension SendStateMachine {
    /// The schemes to answer a 401 with by sending again: after pre-emptive Basic, once, when
    /// the server offers a scheme other than Basic and the transport answers challenges.
    func challengeToAnswer(_ exchange: Exchange, head: TransportResponseHead, authRetries: Int) -> [String]? {
        let network = exchange.request.network
        guard configuration.answersChallenges, head.statusCode == 401, authRetries == 0, network.credentials != nil,
            network.presentsCredentialsBeforeChallenge, network.challengeSchemes.isEmpty,
            let challenge = head.header("WWW-Authenticate")
        else { return nil }
        let others = AuthenticationChallenge.schemes(in: challenge).filter {
            AuthenticationChallenge.answerable.contains($0) && $0 != "Basic"
        }
        return others.isEmpty ? nil : others
    }
}
