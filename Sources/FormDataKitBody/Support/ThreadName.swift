import FormDataKitWire
import CFileSpace
import Foundation

/// Names the calling thread so the system sees it (`/proc/PID/task/TID/comm`, `top -H`, `perf`).
///
/// `Thread.current.name = …` on a new thread's first line raced with the thread's start in
/// swift-corelibs-foundation: it names the thread only once `start()` has recorded the thread's
/// handle, so a thread that ran first kept its creator's name (seen: the curl transport's thread
/// showing as `oot.default-qos`).
package enum ThreadName {
    /// Names the calling thread `name` (Linux keeps at most 15 bytes).
    package static func setCurrent(_ name: String) {
        #if os(Linux)
        _ = cfilespace_name_thread(name)
        #else
        Thread.current.name = name
        #endif
    }
}
