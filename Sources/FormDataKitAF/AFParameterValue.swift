import Foundation

/// How AFNetworking saw a parameter value: a collection to walk, or a leaf rendered as
/// Objective-C's `-description` would render it (Bool as `1`/`0`, `1.0` as `1`).
enum AFParameterValue {
    /// No value (`NSNull`, or a Swift optional holding nil): rendered as a bare key.
    case null
    /// A dictionary: walked in key order.
    case dictionary([(key: Any, value: Any)])
    /// An array: walked in order.
    case array([Any])
    /// A set: walked in description order.
    case set([Any])
    /// Raw bytes (multipart uses them as they are).
    case data(Data)
    /// Anything else.
    case leaf(Any)

    /// Classifies `value`, unwrapping Swift optionals.
    static func classify(_ value: Any) -> AFParameterValue {
        guard let value = unwrapped(value), !(value is NSNull) else { return .null }
        if let data = value as? Data { return .data(data) }
        if let dictionary = value as? [AnyHashable: Any] {
            return .dictionary(dictionary.map { (key: $0.key.base, value: $0.value) })
        }
        if let array = value as? [Any] { return .array(array) }
        if let set = value as? Set<AnyHashable> { return .set(set.map { $0.base }) }
        return .leaf(value)
    }

    /// `value` with any levels of `Optional` removed; nil for an optional holding nil.
    static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let child = mirror.children.first else { return nil }
        return unwrapped(child.value)
    }

    /// `value` rendered as Objective-C's `-description` renders it.
    static func describe(_ value: Any) -> String {
        guard let value = unwrapped(value) else { return "" }
        switch value {
        case let string as String:
            return string
        case let string as Substring:
            return String(string)
        case let bool as Bool where type(of: value) == Bool.self:
            return bool ? "1" : "0"
        case let number as NSNumber where type(of: value) is NSNumber.Type:
            return describe(number: number)
        case let integer as any BinaryInteger:
            return "\(integer)"
        case let double as Double:
            return describe(floating: double)
        case let float as Float:
            return describe(floating: float)
        case let string as NSString:
            return string as String
        case let data as Data:
            return (data as NSData).description
        case let url as URL:
            return url.absoluteString
        default:
            return String(describing: value)
        }
    }

    /// An `NSNumber`: integers and booleans as digits, floating values as ``describe(double:)``.
    private static func describe(number: NSNumber) -> String {
        switch String(cString: number.objCType) {
        case "f": return describe(floating: number.floatValue)
        case "d": return describe(floating: number.doubleValue)
        default: return number.description
        }
    }

    /// A floating value as Apple's `NSNumber` prints it: integral values without `.0`,
    /// others in their shortest round-tripping form (`1.5`, `0.1`).
    private static func describe<Value: BinaryFloatingPoint & CustomStringConvertible>(floating value: Value) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
            return String(Int64(value))
        }
        return value.description
    }

    /// Whether description `a` sorts before `b` as `-[NSString compare:]` (no options) sorts them.
    static func precedes(_ a: String, _ b: String) -> Bool {
        // ASCII names (nearly all) in code-unit order, which is what `compare(_:)` gives them.
        if a.utf8.allSatisfy({ $0 < 0x80 }), b.utf8.allSatisfy({ $0 < 0x80 }) { return a.utf8.lexicographicallyPrecedes(b.utf8) }
        return NSString(string: a).compare(b) == .orderedAscending
    }
}
