import Foundation
import Testing

/// Runs one case of a test in a child process: the same test binary, filtered to that test, with
/// an environment variable naming the case. The case passes in the parent when it passes in the
/// child.
///
/// Why: FoundationNetworking (swift-corelibs-foundation 6.3.1, Linux) can crash the whole
/// process when a URLSession upload from a file is cancelled, times out or loses its connection
/// while a read of its body file is in flight. `_BodyFileSource`'s read completion unpauses the
/// easy handle, and `_EasyHandle._PauseState.setState` does `try!` on `curl_easy_pause`, which
/// fails with CURLE_BAD_FUNCTION_ARGUMENT (43) once the handle has left its connection. Nothing
/// in the calling code can catch that. Running those cases in a child keeps the crash from
/// ending every other test; the crash itself, recognised by that frame, is recorded as a known,
/// intermittent issue and the case is run again in a new child (up to three in all), and any
/// other failure of a child is a failure here.
public enum Isolation {
    /// How a child running one case ended.
    public enum Outcome: Equatable, Sendable {
        /// The case ran and passed.
        case passed
        /// The child crashed in FoundationNetworking's known `try!` (``knownCrashFrame``).
        case knownCrash
        /// Anything else: a failed expectation, another crash, or the case never ran.
        case failed(String)
    }

    /// Names the one case a child runs (`test#case`); unset in the parent.
    static let caseVariable = "FORMDATAKIT_ISOLATED_CASE"
    /// Printed by the child when it starts the case, so a filter that matched nothing is caught.
    static let startedMarker = "isolated case started: "
    /// The frame of the known FoundationNetworking crash.
    public static let knownCrashFrame = "_PauseState.setState"

    /// Runs `body` for case `caseName` of the test `test` (`#function` of the caller).
    ///
    /// - In the parent, with `isolate` true (and on Linux), runs the test binary again, filtered
    ///   to `test`, and records how the child ended; a child that crashed in ``knownCrashFrame``
    ///   is started again, up to `attempts` children in all. With `isolate` false, runs `body` here.
    /// - In a child, runs `body` only for the case it was started for; other cases return at once.
    /// - Returns: how many children crashed in ``knownCrashFrame`` (0 when run in this process).
    @discardableResult
    public static func run(
        case caseName: String, isolate: Bool = true, attempts: Int = 3, test: String = #function,
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async throws -> Int {
        if isChild {
            try await inChildOnly(case: caseName, test: test, body)
            return 0
        }
        #if os(Linux)
        guard isolate else {
            try await body()
            return 0
        }
        // A known crash ends a child before the case's own checks have run: it is retried, so
        // those checks still decide the case unless every attempt crashed.
        var crashes = 0
        var outcome = Outcome.knownCrash
        while outcome == .knownCrash, crashes < attempts {
            outcome = try await runChild(test: test, case: caseName)
            if outcome == .knownCrash {
                crashes += 1
                print("\(test)#\(caseName): attempt \(crashes) ended in the known FoundationNetworking crash (\(knownCrashFrame))")
            }
        }
        if crashes > 0 {
            withKnownIssue(
                "swift-corelibs-foundation: try! in _EasyHandle._PauseState.setState when an upload is ended mid-body",
                isIntermittent: true
            ) {
                Issue.record(
                    "\(crashes) of the children running \(test)#\(caseName) crashed in \(knownCrashFrame)",
                    sourceLocation: sourceLocation)
            }
        }
        if case .failed(let why) = outcome {
            Issue.record("the child running \(test)#\(caseName) \(why)", sourceLocation: sourceLocation)
        }
        return crashes
        #else
        try await body()
        return 0
        #endif
    }

    /// Whether this process is a child started for one case.
    public static var isChild: Bool { ProcessInfo.processInfo.environment[caseVariable] != nil }

    /// Runs `body` only in a child started for case `caseName` of `test`; elsewhere does nothing.
    public static func inChildOnly(case caseName: String, test: String = #function, _ body: () async throws -> Void) async throws {
        let key = "\(test)#\(caseName)"
        guard ProcessInfo.processInfo.environment[caseVariable] == key else { return }
        print(startedMarker + key)
        try await body()
    }

    /// Runs the test binary again, filtered to `test`, as a child that runs case `caseName`.
    public static func runChild(test: String, case caseName: String) async throws -> Outcome {
        let key = "\(test)#\(caseName)"
        // swift-testing matches --filter, a regular expression, against each test's identifier
        // ("Module.Suite/function(labels:)").
        let filter = "/" + NSRegularExpression.escapedPattern(for: test)
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let child = try await ChildProcess.run(
            binary, ["--testing-library", "swift-testing", "--filter", filter], environment: [caseVariable: key])
        let printed = String(decoding: child.stdout, as: UTF8.self) + String(decoding: child.stderr, as: UTF8.self)
        if child.signalled, printed.contains(knownCrashFrame) { return .knownCrash }
        let ran = printed.contains(startedMarker + key)
        if !child.signalled, child.status == 0, ran { return .passed }
        let how = child.signalled ? "was killed by signal \(child.status)" : "exited with status \(child.status)"
        return .failed((ran ? how : "\(how) without running the case (filter \(filter))") + ":\n" + summary(of: printed))
    }

    /// The child's failure lines, or the end of its output when it printed none.
    static func summary(of printed: String) -> String {
        let lines = printed.split(separator: "\n", omittingEmptySubsequences: true)
        let failures = lines.filter { $0.contains("✘") || $0.contains("Expectation failed") || $0.contains("Fatal error") }
        return (failures.isEmpty ? Array(lines.suffix(30)) : Array(failures.prefix(30))).joined(separator: "\n")
    }
}
