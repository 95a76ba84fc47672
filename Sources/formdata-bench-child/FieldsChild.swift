import FormDataKit
import Foundation

/// W1/W2: builds the form of the fields in FIELDS.json (`[[name, value], ...]`) `iterations`
/// times, URL-encoded (w1) or multipart (w2), and prints the median build time in seconds and
/// the body size.
enum FieldsChild {
    static func run(workload: String, fieldsPath: String, iterations: Int) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: fieldsPath))
        guard let fields = try JSONSerialization.jsonObject(with: data) as? [[String]] else {
            throw ChildError.failed("bad fields file \(fieldsPath)")
        }
        var times: [Double] = []
        var size: UInt64 = 0
        for _ in 0..<iterations {
            let start = DispatchTime.now().uptimeNanoseconds
            let request = FormDataRequest(url: URL(string: "http://127.0.0.1/")!)
            if workload == "w2" {
                request.postFormat = .multipartFormData
                request.multipartBoundary = "0xKhTmLbOuNdArY-A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D"
            }
            for field in fields { request.addPostValue(field[1], forKey: field[0]) }
            try request.buildPostBody()
            size = request.postLength
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        let sorted = times.sorted()
        let mid = sorted.count / 2
        let median = sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
        print(String(format: "%.9f %llu", median, size))
    }
}

/// `set-values COUNT`: COUNT distinct keys set with `setPostValue` on one request (ASI's replace
/// rule checks every earlier field of the name); prints `formdata-bench-seconds S`.
enum SetValuesChild {
    static func run(count: Int) {
        let request = FormDataRequest(url: URL(string: "http://127.0.0.1:9/")!)
        let start = ContinuousClock.now
        for index in 0..<count { request.setPostValue("value \(index)", forKey: "key\(index)") }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("formdata-bench-seconds \(seconds)")
    }
}
