import Foundation

/// One flattened parameter: a field name (nil for a top-level non-dictionary value) and a value
/// (nil for a bare key).
struct AFQueryStringPair {
    /// The flattened field name, e.g. `user[name]` or `ids[]`.
    var field: String?
    /// The leaf value, or nil for `NSNull`.
    var value: Any?

    /// `field=value` with both sides escaped, or the bare escaped field when there is no value.
    var urlEncodedStringValue: String {
        let name = AFPercentEscapedStringFromString(field ?? "")
        guard let value else { return name }
        return name + "=" + AFPercentEscapedStringFromString(AFParameterValue.describe(value))
    }

    /// Flattens `value` under `key` as AFNetworking did: dictionaries in key-description order as
    /// `key[sub]`, arrays in order as `key[]`, sets in description order under the same key.
    static func pairs(key: String?, value: Any) -> [AFQueryStringPair] {
        switch AFParameterValue.classify(value) {
        case .null:
            return [AFQueryStringPair(field: key, value: nil)]
        case .dictionary(let entries):
            let sorted =
                entries
                .map { (name: AFParameterValue.describe($0.key), value: $0.value) }
                .sorted { AFParameterValue.precedes($0.name, $1.name) }
            return sorted.flatMap { entry in
                pairs(key: key.map { "\($0)[\(entry.name)]" } ?? entry.name, value: entry.value)
            }
        case .array(let elements):
            let childKey = "\(key ?? "(null)")[]"
            return elements.flatMap { pairs(key: childKey, value: $0) }
        case .set(let members):
            let sorted =
                members
                .map { (name: AFParameterValue.describe($0), value: $0) }
                .sorted { AFParameterValue.precedes($0.name, $1.name) }
            return sorted.flatMap { pairs(key: key, value: $0.value) }
        case .data(let data):
            return [AFQueryStringPair(field: key, value: data)]
        case .leaf(let leaf):
            return [AFQueryStringPair(field: key, value: leaf)]
        }
    }
}

/// AFNetworking's query string for a parameters dictionary: pairs flattened and sorted (see
/// below), each side escaped with ``AFPercentEscapedStringFromString(_:)``, joined with `&`.
///
/// - Dictionary keys are sorted by their descriptions as `-[NSString compare:]` sorts them
///   (`B` before `a`, `10` before `2`); nested dictionaries become `key[sub]`, arrays `key[]`
///   (in order), sets repeat the key (members in description order).
/// - `NSNull` (or a nil optional) gives the bare key with no `=`; Bool is `1`/`0`.
///
/// ```swift
/// AFQueryStringFromParameters(["key": "value", "key1": "value&"])  // "key=value&key1=value%26"
/// AFQueryStringFromParameters(["user": ["name": "x", "age": 3]])   // "user%5Bage%5D=3&user%5Bname%5D=x"
/// ```
/// - Parameter parameters: the parameters (nested dictionaries, arrays and sets allowed).
/// - Returns: the query string, without a leading `?`.
public func AFQueryStringFromParameters(_ parameters: [AnyHashable: Any]) -> String {
    AFQueryString.make(from: parameters)
}

/// The query-string flattening for any parameters value, as the serializers use it.
enum AFQueryString {
    /// The query string for `parameters`; a top-level non-dictionary value `v` gives `=v`.
    static func make(from parameters: Any) -> String {
        AFQueryStringPair.pairs(key: nil, value: parameters)
            .map(\.urlEncodedStringValue)
            .joined(separator: "&")
    }
}
