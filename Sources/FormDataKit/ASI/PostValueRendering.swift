import Foundation

/// Turns a post value into the text sent, as Objective-C's `-description` did for
/// ASIFormDataRequest: strings as they are, `Bool` as `1`/`0`, integers plainly, floating-point
/// numbers with up to 16 significant digits (`1.0` → `1`, `0.5` → `0.5`), dates as
/// `2026-11-22 03:57:10 +0000`, URLs as their absolute string, nil as an empty value.
enum PostValueRendering {
    static func render(_ value: Any?) -> String {
        guard let value else { return "" }
        switch value {
        case let string as String: return string
        case let string as Substring: return String(string)
        case let string as NSString: return string as String
        case let flag as Bool: return flag ? "1" : "0"
        case let number as Int: return String(number)
        case let number as Int8: return String(number)
        case let number as Int16: return String(number)
        case let number as Int32: return String(number)
        case let number as Int64: return String(number)
        case let number as UInt: return String(number)
        case let number as UInt8: return String(number)
        case let number as UInt16: return String(number)
        case let number as UInt32: return String(number)
        case let number as UInt64: return String(number)
        case let number as Double: return format(number)
        case let number as Float: return String(format: "%0.7g", Double(number))
        case let number as Decimal: return number.description
        case let number as NSNumber: return renderNumber(number)
        case let date as Date: return date.description
        case let url as URL: return url.absoluteString
        case let uuid as UUID: return uuid.uuidString
        case let convertible as CustomStringConvertible: return convertible.description
        default: return String(describing: value)
        }
    }

    private static func format(_ number: Double) -> String {
        if number.isNaN { return "nan" }
        if number.isInfinite { return number < 0 ? "-inf" : "inf" }
        return String(format: "%0.16g", number)
    }

    private static func renderNumber(_ number: NSNumber) -> String {
        let type = String(cString: number.objCType)
        switch type {
        case "d": return format(number.doubleValue)
        case "f": return String(format: "%0.7g", number.doubleValue)
        case "c", "B": return number.boolValue ? "1" : "0"
        default: return number.stringValue
        }
    }
}
