import FormDataKitWire
import Foundation

/// A plain value field of a form: a name and its text.
public struct FormValueField: Sendable, Equatable {
    /// The field's name.
    public var name: String
    /// The field's value, already rendered as text.
    public var value: String

    /// A value field named `name` holding `value`.
    /// - Parameters:
    ///   - name: the field's name.
    ///   - value: the field's value, already rendered as text.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A file field of a form: a file on disk, bytes in memory or a stream, sent with a file name and type.
public struct FormFileField: Sendable, Equatable {
    /// Where a file field's bytes come from.
    public enum Content: Sendable, Equatable {
        /// The file at this path, read when the body is built.
        case file(path: String)
        /// These bytes.
        case data(Data)
        /// The bytes a stream gives when the body is sent (of a declared length or none).
        case stream(StreamedContent)
    }

    /// The field's name.
    public var name: String
    /// The `filename` sent in the part's `Content-Disposition`.
    public var fileName: String
    /// The part's `Content-Type`.
    public var contentType: String
    /// The bytes, or the file that holds them.
    public var content: Content
    /// The file's size when it was added, for a ``Content/file(path:)`` field: a build finds a
    /// file of any other size changed and fails rather than send other contents than were added.
    /// Nil: not checked (the size is read at build).
    public var sizeWhenAdded: UInt64?

    /// A file field named `name`.
    /// - Parameters:
    ///   - name: the field's name.
    ///   - fileName: the `filename` sent.
    ///   - contentType: the part's `Content-Type`.
    ///   - content: the bytes, or the file that holds them.
    ///   - sizeWhenAdded: the file's size when added (see ``sizeWhenAdded``).
    public init(name: String, fileName: String, contentType: String, content: Content, sizeWhenAdded: UInt64? = nil) {
        self.name = name
        self.fileName = fileName
        self.contentType = contentType
        self.content = content
        self.sizeWhenAdded = sizeWhenAdded
    }
}

/// What a user collects: value fields and file fields, each in the order they were added.
///
/// A value type with ASIFormDataRequest's add/set rules: `add` appends (duplicates allowed);
/// `set` removes every field of the same kind with that name, then appends.
public struct Form: Sendable, Equatable {
    /// The value fields, in the order added.
    public private(set) var values: [FormValueField] = []
    /// The file and data fields, in the order added.
    public private(set) var files: [FormFileField] = []
    /// How many value fields have each name, once the form has more than ``countedAbove`` of
    /// them: `setValue` with a new name then only appends (100,000 distinct names are set in
    /// linear time, not quadratic); a small form is searched instead (no table to allocate).
    private var valueNameCounts: [String: Int]?
    /// Above this many value fields, their names are counted in ``valueNameCounts``.
    private static let countedAbove = 8

    /// An empty form.
    public init() {}

    /// Whether the form has no fields at all.
    public var isEmpty: Bool { values.isEmpty && files.isEmpty }

    /// Appends a value field.
    /// - Parameters:
    ///   - value: the value, as text.
    ///   - name: the field's name (duplicates allowed).
    public mutating func addValue(_ value: String, forName name: String) {
        if values.capacity == 0 { values.reserveCapacity(Self.countedAbove / 2) }
        values.append(FormValueField(name: name, value: value))
        if valueNameCounts != nil {
            valueNameCounts![name, default: 0] += 1
        } else if values.count > Self.countedAbove {
            valueNameCounts = values.reduce(into: [:]) { counts, field in counts[field.name, default: 0] += 1 }
        }
    }

    /// Removes every value field named `name`, then appends this one.
    /// - Parameters:
    ///   - value: the value, as text.
    ///   - name: the field's name.
    public mutating func setValue(_ value: String, forName name: String) {
        if valueNameCounts == nil {
            values.removeAll { $0.name == name }
        } else if valueNameCounts?[name] != nil {
            values.removeAll { $0.name == name }
            valueNameCounts?[name] = nil
        }
        addValue(value, forName: name)
    }

    /// Forms are equal when their fields are, in order.
    /// - Parameters:
    ///   - lhs: one form.
    ///   - rhs: the other.
    /// - Returns: whether both have the same value and file fields in the same order.
    public static func == (lhs: Form, rhs: Form) -> Bool {
        lhs.values == rhs.values && lhs.files == rhs.files
    }

    /// Appends a file field.
    /// - Parameter field: the file or data field (duplicate names allowed).
    public mutating func addFile(_ field: FormFileField) {
        files.append(field)
    }

    /// Removes every file field named `field.name`, then appends `field`.
    /// - Parameter field: the file or data field that replaces every file field of its name.
    public mutating func setFile(_ field: FormFileField) {
        files.removeAll { $0.name == field.name }
        addFile(field)
    }
}
