import Foundation
import FormDataKitTestSupport
import Testing

/// The child-process runner that keeps FoundationNetworking's upload-cancel crash from ending the
/// whole test run: it must tell a passing case, a failing one, the known crash and any other
/// crash apart, and must not pass a case that never ran.
@Suite("Test isolation in a child process")
struct IsolationTests {
    /// Cases that do something only in a child started for them (a no-op in a normal run).
    @Test("child cases (no-ops outside a child)", arguments: ["pass", "fail", "knownCrash", "otherCrash"])
    func childCase(name: String) async throws {
        try await Isolation.inChildOnly(case: name) {
            switch name {
            case "pass":
                #expect(name.count == 4)
            case "fail":
                #expect(name.count == 5, "this failure is the case's purpose")
            case "knownCrash":
                // Stands in for FoundationNetworking's crash: the same frame name in the report.
                fatalError("simulated crash in \(Isolation.knownCrashFrame)")
            default:
                fatalError("simulated unrelated crash")
            }
        }
    }

    @Test("a child's outcome: passed, failed, known crash, other crash, never ran")
    func outcomes() async throws {
        #if os(Linux)
        let test = "childCase(name:)"
        #expect(try await Isolation.runChild(test: test, case: "pass") == .passed)
        #expect(try await Isolation.runChild(test: test, case: "knownCrash") == .knownCrash)
        guard case .failed(let failure) = try await Isolation.runChild(test: test, case: "fail") else {
            Issue.record("a failing case was not reported as failed")
            return
        }
        #expect(failure.contains("exited with status"))
        guard case .failed(let crash) = try await Isolation.runChild(test: test, case: "otherCrash") else {
            Issue.record("an unrelated crash was not reported as failed")
            return
        }
        #expect(crash.contains("killed by signal"))
        guard case .failed(let missing) = try await Isolation.runChild(test: test, case: "missing") else {
            Issue.record("a case that never ran was not reported as failed")
            return
        }
        #expect(missing.contains("without running the case"))
        #endif
    }

    @Test("a known crash is retried; a case that crashes every time is a known issue after three children")
    func knownCrashRetried() async throws {
        #if os(Linux)
        #expect(try await Isolation.run(case: "pass", test: "childCase(name:)") {} == 0)
        #expect(try await Isolation.run(case: "knownCrash", test: "childCase(name:)") {} == 3)
        #endif
    }
}
