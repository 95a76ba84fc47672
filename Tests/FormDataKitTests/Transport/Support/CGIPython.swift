#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import FormDataKitTestSupport
import FormDataKitTesting

/// The Python that runs `report_cgi.py` under Apache: the test's own `python3` when Apache's
/// workers can run it, otherwise a system interpreter with a copy of werkzeug.
///
/// As root, Apache's workers run as another account (www-data). A `python3` with werkzeug under
/// a private home (pyenv in `/root`, mode 0700) is then out of their reach: the script runs with
/// a world-reachable interpreter (`/usr/bin/python3`) and `PYTHONPATH` pointing at a copy of the
/// packages werkzeug needs (pure Python; markupsafe falls back to Python when its compiled
/// speed-up is for another version).
struct CGIPython: Sendable {
    /// The interpreter of the test's `python3` (symbolic links and shims resolved).
    var executable: String
    /// The folders of werkzeug and the packages it imports (markupsafe).
    var packages: [String]

    /// The interpreter line and `PYTHONPATH` for the script.
    struct Choice {
        var executable: String
        var pythonPath: String?
    }

    /// The test's `python3`, asked once per test process where it and werkzeug live.
    static let probed = Task<CGIPython, any Error> {
        let probe = """
            import json, os, sys
            import markupsafe, werkzeug
            print(json.dumps({"executable": os.path.realpath(sys.executable),
                              "packages": [os.path.dirname(m.__file__) for m in (werkzeug, markupsafe)]}))
            """
        let result = try await SpawnedProcess.run("/usr/bin/env", ["python3", "-c", probe])
        struct Answer: Decodable {
            var executable: String
            var packages: [String]
        }
        guard result.termination.succeeded, let answer = try? JSONDecoder().decode(Answer.self, from: result.stdout) else {
            throw RealServers.Failure(
                description: "the CGI script needs python3 with werkzeug (python3 -m pip install werkzeug): "
                    + String(decoding: result.stdout + result.stderr, as: UTF8.self))
        }
        return CGIPython(executable: answer.executable, packages: answer.packages)
    }

    /// The interpreter for the script and its `PYTHONPATH`: this one, with the packages' folders,
    /// when `reachableByOthers` is false (the workers run as the test's own account) or when
    /// other accounts can run it and read its packages; otherwise a world-reachable system
    /// `python3`, with the packages copied into `folder`.
    func interpreter(reachableByOthers: Bool, copyingPackagesTo folder: String) throws -> Choice {
        if !reachableByOthers || ([executable] + packages).allSatisfy(RealServers.isWorldReachable) {
            // The folders holding the packages, on PYTHONPATH too: the CGI's environment is not
            // the test's (werkzeug found through the test's own PYTHONPATH is found again).
            let folders = packages.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
            return Choice(
                executable: executable,
                pythonPath: folders.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
                    .joined(separator: ":"))
        }
        let candidates = ["/usr/bin/python3", "/usr/local/bin/python3"]
        guard let system = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) && RealServers.isWorldReachable($0) })
        else {
            throw RealServers.Failure(
                description: "running as root, Apache's workers cannot run \(executable), and there is no "
                    + "system python3 (\(candidates.joined(separator: ", "))) for report_cgi.py: install the Debian package python3")
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for package in packages {
            try FileManager.default.copyItem(atPath: package, toPath: "\(folder)/\(URL(fileURLWithPath: package).lastPathComponent)")
        }
        return Choice(executable: system, pythonPath: folder)
    }
}
