import Foundation

/// A receiver that counts what it read, for ``MeasuredCase/measure(receiver:bodyBytesAbove:stdoutPath:failures:)``:
/// ``DiscardReceiver``, W9's TLS receiver.
protocol CountingReceiver {
    /// Zeroes the counts.
    func reset()
    /// What it read since the last ``reset()``.
    var stats: DiscardReceiver.Stats { get }
}

extension DiscardReceiver: CountingReceiver {}

/// A W5 or `concurrent` case: its row, its command, and how its time is read.
struct MeasuredCase {
    enum Timing {
        /// One send; the process's wall time.
        case wallClock
        /// `sends` sends; the child prints `formdata-bench-seconds S` for each.
        case childClock(sends: Int)
        /// `sends` transfers of one `curl` process, each printing `-w %{time_total}`.
        case curlTimeTotal(sends: Int)

        var sends: Int {
            switch self {
            case .wallClock: 1
            case .childClock(let sends), .curlTimeTotal(let sends): sends
            }
        }

        var note: String {
            switch self {
            case .wallClock: ""
            case .childClock(let sends):
                "; per send: median of \(sends) sequential build + sends in one process (its own clock per send, from "
                    + "startSynchronous to its return: the form's setup before it is outside, as curl's is outside time_total)"
            case .curlTimeTotal(let sends): "; per send: median of \(sends) transfers in one curl (--next), -w %{time_total}"
            }
        }
    }

    var row: ResultRow
    var timing: Timing
    var command: [String]
    /// The requests the receiver must have read completely per run (`timing.sends` unless set).
    var requests: Int?
    var failed = false
    /// The first send's time in each run (for `childClock` and `curlTimeTotal`).
    var firstSendSeconds: [Double] = []
    /// The command's CPU time (user + system, its descendants included) in each run.
    var cpuSeconds: [Double] = []
    /// The median time a FormDataKit child spent setting each form up before its send (the
    /// request, its fields, `addFile`'s checks), in each run; outside the send's clock.
    var setupSeconds: [Double] = []
    /// How a child prints the time it set a form up before sending it.
    static let setupPrefix = "formdata-bench-setup-seconds "

    /// The row, its note ending with the median CPU time of the command (one send: the whole
    /// process is the send) or the median first send (several sends).
    var finishedRow: ResultRow {
        guard !failed else { return row }
        var row = row
        if timing.sends > 1, !firstSendSeconds.isEmpty {
            row.note += String(format: "; first send %.2f ms", median(firstSendSeconds) * 1000)
            if !setupSeconds.isEmpty {
                row.note += String(format: "; setup before each send (median) %.3f ms", median(setupSeconds) * 1000)
            }
        } else if timing.sends == 1, !cpuSeconds.isEmpty {
            row.note += String(format: "; cpu %.2f s (median, user + sys)", median(cpuSeconds))
        }
        return row
    }

    /// Runs the command once, checks its exit status and what the receiver got (every request,
    /// each body over `bodyBytesAbove`), and adds its time and peak RSS to `row`; on a failure,
    /// marks the row and adds a line to `failures`.
    mutating func measure(receiver: any CountingReceiver, bodyBytesAbove: Int, stdoutPath: String, failures: inout [String]) {
        receiver.reset()
        let child = runMeasured(command, stdoutPath: stdoutPath)
        let output = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let stats = receiver.stats
        let wanted = requests ?? timing.sends
        var problem: String?
        var seconds = child.seconds
        var times: [Double] = []
        if child.status != 0 {
            problem = "exited \(child.status) (its error is on stderr above)"
        } else if stats.requests != wanted || stats.minimumBodyBytes <= bodyBytesAbove {
            problem =
                "the receiver read \(stats.requests) request(s) (want \(wanted)), smallest body \(stats.minimumBodyBytes) bytes (want > \(bodyBytesAbove))"
        } else {
            switch timing {
            case .wallClock: break
            case .childClock:
                let prefix = "formdata-bench-seconds "
                times = output.split(separator: "\n").filter { $0.hasPrefix(prefix) }.compactMap { Double($0.dropFirst(prefix.count)) }
            case .curlTimeTotal:
                times = output.split(separator: "\n").compactMap { Double($0) }
            }
            let setupTimes = output.split(separator: "\n").filter { $0.hasPrefix(Self.setupPrefix) }.compactMap {
                Double($0.dropFirst(Self.setupPrefix.count))
            }
            if !setupTimes.isEmpty { setupSeconds.append(median(setupTimes)) }
            if timing.sends > 1 {
                if times.count == timing.sends {
                    seconds = median(times)
                    firstSendSeconds.append(times[0])
                } else {
                    problem = "printed \(times.count) send times, want \(timing.sends)"
                }
            }
        }
        if let problem {
            failed = true
            row.note = "FAILED: \(problem)"
            failures.append("\(row.workload) · \(row.tool): \(problem) — command: \(command.prefix(6).joined(separator: " "))…")
            return
        }
        row.seconds.append(seconds)
        row.peakRSSKiB = max(row.peakRSSKiB ?? 0, child.peakRSSKiB)
        cpuSeconds.append(child.cpuSeconds)
    }
}
