#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormDataKit
import Foundation

/// Two network namespaces of the benchmark's own, a client's and a server's, joined by a veth
/// pair, where fault profiles are applied during a transfer: random loss and black holes with
/// nftables (tables inside the two namespaces), a rate limit with `tbf` on the client's end.
///
/// It never touches the host's interfaces, routes or firewall: the veth ends are created inside
/// the namespaces (`ip link add … netns …`), the addresses are its own (``clientAddress``,
/// ``serverAddress``), and ``tearDown()`` (also run by `deinit`) deletes both namespaces, which
/// removes everything made in them. Namespaces left by a run that was killed are named after its
/// process id and removed by the next run.
final class FaultLab: Sendable {
    /// The client's address on the veth pair.
    static let clientAddress = "10.203.0.1"
    /// The server's address on the veth pair.
    static let serverAddress = "10.203.0.2"
    private static let prefix = "fdk-faults-"

    /// The client's namespace.
    let client: String
    /// The server's namespace.
    let server: String
    private let clientLink: String
    private let serverLink: String
    private let torn = Locked(false)

    /// Why a lab cannot be made here (not root, or `ip`, `tc` or `nft` missing), or nil.
    static var unavailableReason: String? {
        if getuid() != 0 { return "needs root (network namespaces)" }
        for tool in ["ip", "tc", "nft"] where !toolExists(tool) {
            return "needs `\(tool)` (Debian's iproute2 and nftables)"
        }
        return nil
    }

    /// Makes the namespaces and the link between them.
    /// - Throws: `BenchError.childFailed` naming the command that failed (what it made is removed).
    init() throws {
        Self.removeAbandoned()
        let id = getpid()
        client = "\(Self.prefix)\(id)-c"
        server = "\(Self.prefix)\(id)-s"
        clientLink = "fdk\(id)c"
        serverLink = "fdk\(id)s"
        do {
            try Self.run(["ip", "netns", "add", client])
            try Self.run(["ip", "netns", "add", server])
            try Self.run([
                "ip", "link", "add", clientLink, "netns", client, "gso_max_segs", "1", "type", "veth", "peer", "name", serverLink,
                "netns", server, "gso_max_segs", "1",
            ])
            for (namespace, link, address) in [(client, clientLink, Self.clientAddress), (server, serverLink, Self.serverAddress)] {
                try inside(namespace, ["ip", "link", "set", "lo", "up"])
                try inside(namespace, ["ip", "address", "add", "\(address)/30", "dev", link])
                try inside(namespace, ["ip", "link", "set", link, "up"])
                try inside(namespace, ["nft", "add", "table", "inet", "faults"])
            }
        } catch {
            tearDown()
            throw error
        }
    }

    deinit { tearDown() }

    /// `arguments` as run inside `namespace` (a prefix for a child process).
    func command(in namespace: String, _ arguments: [String]) -> [String] { ["ip", "netns", "exec", namespace] + arguments }

    /// Drops `percent` % of the packets that cross the veth pair at random, both ways (in each
    /// namespace, on input from its veth end: a namespace's own loopback, such as the delay
    /// relay's hop to its server, is not touched); 0 removes the rule.
    func setLoss(percent: Int) throws {
        for (namespace, link) in [(client, clientLink), (server, serverLink)] {
            try? inside(namespace, ["nft", "delete", "chain", "inet", "faults", "loss"])
            guard percent > 0 else { continue }
            try inside(namespace, ["nft", "add", "chain", "inet", "faults", "loss", "{ type filter hook input priority 0 ; }"])
            try inside(
                namespace,
                [
                    "nft", "add", "rule", "inet", "faults", "loss", "iifname", link, "numgen", "random", "mod", "100", "<", "\(percent)",
                    "drop",
                ])
        }
    }

    /// Limits what the client (or, `onServer`, the server) sends to `megabits` per second
    /// (`tbf`); nil removes the limit.
    func setRate(megabits: Int?, onServer: Bool = false) throws {
        let (namespace, link) = onServer ? (server, serverLink) : (client, clientLink)
        try? inside(namespace, ["tc", "qdisc", "del", "dev", link, "root"])
        guard let megabits else { return }
        try inside(
            namespace,
            ["tc", "qdisc", "add", "dev", link, "root", "tbf", "rate", "\(megabits)mbit", "burst", "32kbit", "latency", "400ms"])
    }

    func setBlackHole(_ on: Bool) throws {
        if on {
            for hook in ["input", "output"] {
                try inside(
                    client,
                    ["nft", "add", "chain", "inet", "faults", "hole-\(hook)", "{ type filter hook \(hook) priority -10 ; policy drop ; }"])
            }
        } else {
            for hook in ["input", "output"] { try? inside(client, ["nft", "delete", "chain", "inet", "faults", "hole-\(hook)"]) }
        }
    }

    /// Counts every packet the client sends on the veth pair, before a black hole drops it (an
    /// nft counter at priority -20, ahead of the hole's -10), for ``clientOutput()``.
    func countClientOutput() throws {
        try inside(client, ["nft", "add", "chain", "inet", "faults", "count-out", "{ type filter hook output priority -20 ; }"])
        try inside(client, ["nft", "add", "rule", "inet", "faults", "count-out", "oifname", clientLink, "counter"])
    }

    /// The packets and their IP bytes (headers included) the client sent since
    /// ``countClientOutput()``, or nil when they cannot be read.
    func clientOutput() -> (packets: Int, bytes: Int)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command(in: client, ["nft", "-j", "list", "chain", "inet", "faults", "count-out"])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        for item in json?["nftables"] as? [[String: Any]] ?? [] {
            let expressions = (item["rule"] as? [String: Any])?["expr"] as? [[String: Any]] ?? []
            for expression in expressions {
                if let counter = expression["counter"] as? [String: Any], let packets = counter["packets"] as? Int,
                    let bytes = counter["bytes"] as? Int
                {
                    return (packets, bytes)
                }
            }
        }
        return nil
    }

    /// Deletes both namespaces (and so the link, the rules and the queueing disciplines).
    func tearDown() {
        guard
            !torn.withLock({ torn in
                defer { torn = true }
                return torn
            })
        else { return }
        for namespace in [client, server] { try? Self.run(["ip", "netns", "delete", namespace]) }
    }

    private func inside(_ namespace: String, _ arguments: [String]) throws { try Self.run(command(in: namespace, arguments)) }

    /// Runs a setup command, throwing with its standard error when it fails.
    private static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError.childFailed("\(arguments.joined(separator: " ")): \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// Removes namespaces of earlier runs whose process is gone.
    private static func removeAbandoned() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/run/netns")) ?? []
        for name in names where name.hasPrefix(prefix) {
            let pid = name.dropFirst(prefix.count).split(separator: "-").first.flatMap { pid_t($0) }
            if let pid, pid != getpid(), kill(pid, 0) != 0 { try? run(["ip", "netns", "delete", name]) }
        }
    }
}
