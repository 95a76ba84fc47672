import FormDataKit
import Foundation

extension ReceivedRequest {

    /// This request as the receiver's log keeps it: the bytes of its files, in body order, only
    /// while they add up to at most `budget`; other files keep their size and SHA-256 only.
    func keepingFileBytes(upTo budget: Int) -> ReceivedRequest {
        guard var form, !form.files.isEmpty else { return self }
        var left = budget
        for index in form.files.indices {
            let size = form.files[index].data.count
            if size <= left {
                left -= size
            } else {
                form.files[index].data = Data()
            }
        }
        var copy = self
        copy.form = form
        return copy
    }

    /// About how many bytes this request takes in the receiver's log.
    var estimatedLogBytes: Int {
        var total =
            256 + method.utf8.count + path.utf8.count + (bodySHA256?.utf8.count ?? 0)
            + (capturePath?.utf8.count ?? 0) + (parseError?.reason.utf8.count ?? 0)
        for header in headers { total += 32 + header.name.utf8.count + header.value.utf8.count }
        if let form {
            for field in form.fields { total += 32 + field.name.utf8.count + field.value.utf8.count }
            for file in form.files {
                total += 128 + file.name.utf8.count + file.fileName.utf8.count + (file.contentType?.utf8.count ?? 0) + file.data.count
            }
        }
        return total
    }
}

/// The receiver's memory of past requests, bounded by ``FormReceiver/Limits/logLimit`` and
/// ``FormReceiver/Limits/logByteLimit``.
struct RequestLog {
    struct Entry {
        var request: ReceivedRequest
        var bytes: Int
    }

    private(set) var entries: [Entry] = []
    private var bytes = 0

    /// Adds `request`, then forgets the oldest entries beyond the limits (never the newest).
    mutating func append(_ request: ReceivedRequest, limits: FormReceiver.Limits) {
        let entry = Entry(request: request, bytes: request.estimatedLogBytes)
        entries.append(entry)
        bytes += entry.bytes
        var drop = 0
        var left = bytes
        while entries.count - drop > 1, entries.count - drop > max(1, limits.logLimit) || left > limits.logByteLimit {
            left -= entries[drop].bytes
            drop += 1
        }
        if drop > 0 {
            entries.removeFirst(drop)
            bytes = left
        }
    }
}

extension JSONEncoder {
    /// An encoder with sorted keys (stable output).
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
