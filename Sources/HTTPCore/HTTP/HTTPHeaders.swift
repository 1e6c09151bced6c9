/// An ordered list of header fields. Names compare case-insensitively (ASCII), values are
/// kept as sent with surrounding whitespace trimmed.
///
/// Two representations behind one API: a request's fields stay the bytes the parser
/// validated (`HTTPFieldBlock`, one buffer, a `String` made only for a value someone asks
/// for), and fields built in code (a response's) are a list of strings. Adding or
/// replacing a field of a received list turns it into strings first, so every mutation
/// sees one representation; lookups and iteration behave the same on both.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    private enum Storage: Sendable {
        case strings([(name: String, value: String)])
        case received(HTTPFieldBlock)
    }

    private var storage: Storage

    public init() { storage = .strings([]) }

    /// The fields of a received head, as the parser left them.
    init(received: HTTPFieldBlock) { storage = .received(received) }

    public init(dictionaryLiteral elements: (String, String)...) {
        var fields: [(name: String, value: String)] = []
        // Room for the fields the response policy and the server commonly add.
        fields.reserveCapacity(elements.count + 2)
        for (name, value) in elements { fields.append((name: name, value: value)) }
        storage = .strings(fields)
    }

    /// The fields in the order they were added (or received).
    public var fields: [(name: String, value: String)] {
        switch storage {
        case .strings(let fields): fields
        case .received(let block): block.strings
        }
    }

    /// How many fields there are.
    public var count: Int {
        switch storage {
        case .strings(let fields): fields.count
        case .received(let block): block.count
        }
    }

    public mutating func add(name: String, value: String) {
        var fields = takeStrings()
        fields.append((name: name, value: value))
        storage = .strings(fields)
    }

    /// Replaces every field named `name` with one field holding `value`.
    public mutating func replaceOrAdd(name: String, value: String) {
        var fields = takeStrings()
        if fields.contains(where: { Self.same($0.name, name) }) {
            fields.removeAll { Self.same($0.name, name) }
        }
        fields.append((name: name, value: value))
        storage = .strings(fields)
    }

    /// The first value of the field `name`, or nil.
    public subscript(name: String) -> String? {
        switch storage {
        case .strings(let fields):
            return fields.first { Self.same($0.name, name) }?.value
        case .received(let block):
            var found: String?
            block.forEachValue(named: name) { value in
                found = HTTPSyntax.string(value)
                return false
            }
            return found
        }
    }

    /// Every value of the field `name`, in order.
    public func values(for name: String) -> [String] {
        switch storage {
        case .strings(let fields):
            return fields.filter { Self.same($0.name, name) }.map(\.value)
        case .received(let block):
            var found: [String] = []
            block.forEachValue(named: name) { value in
                found.append(HTTPSyntax.string(value))
                return true
            }
            return found
        }
    }

    public func contains(_ name: String) -> Bool {
        switch storage {
        case .strings(let fields):
            return fields.contains { Self.same($0.name, name) }
        case .received(let block):
            var found = false
            block.forEachValue(named: name) { _ in
                found = true
                return false
            }
            return found
        }
    }

    /// Whether the first field named `name` has exactly the value `lowercase`, ignoring ASCII
    /// case (both must be lowercase ASCII). No `String` is made or read: the name is compared
    /// as bytes (it ran once a field of every reply, about 100 instructions each).
    func firstValue(ofLowercase name: StaticString, equalsIgnoringCase lowercase: StaticString) -> Bool {
        var result = false
        forEachField { fieldName, value in
            guard HTTPSyntax.equalsIgnoringCase(fieldName, name) else { return true }
            result = HTTPSyntax.equalsIgnoringCase(value, lowercase)
            return false
        }
        return result
    }

    /// Calls `body` with each field's name and value bytes, in order, until it returns false.
    func forEachField(_ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool) {
        switch storage {
        case .strings(let fields):
            for field in fields {
                // Borrowed where the bytes are contiguous (always, for a native string): a
                // `var` copy of each for `withUTF8` cost a retain and a release per string, a
                // field of every reply twice (issue 27).
                let borrowed = field.name.utf8.withContiguousStorageIfAvailable { n in
                    field.value.utf8.withContiguousStorageIfAvailable { v in
                        body(UnsafeRawBufferPointer(n), UnsafeRawBufferPointer(v))
                    }
                }
                let goOn: Bool
                if case .some(.some(let answer)) = borrowed {
                    goOn = answer
                } else {
                    var name = field.name, value = field.value
                    goOn = name.withUTF8 { n in
                        value.withUTF8 { v in body(UnsafeRawBufferPointer(n), UnsafeRawBufferPointer(v)) }
                    }
                }
                if !goOn { return }
            }
        case .received(let block):
            block.forEach(body)
        }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        if case .received(let a) = lhs.storage, case .received(let b) = rhs.storage, a == b { return true }
        let lhs = lhs.fields, rhs = rhs.fields
        return lhs.count == rhs.count
            && zip(lhs, rhs).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// The fields as a list of strings, leaving `storage` empty meanwhile so the list is
    /// uniquely referenced while the caller changes it.
    private mutating func takeStrings() -> [(name: String, value: String)] {
        let current = storage
        storage = .strings([])
        switch current {
        case .strings(let fields): return fields
        case .received(let block): return block.strings
        }
    }

    /// ASCII case-insensitive comparison of two header names.
    /// On the strings' contiguous bytes: zipping the two UTF-8 views cost ~3,500
    /// instructions per publish reply looked up by name (issue 27). Names spelled alike
    /// match first by `==`, at once when both are the same literal (about 900 instructions
    /// a publish request). `==` is canonical equivalence, which for an ASCII name of the
    /// same byte count is byte equality (a character that decomposes to ASCII takes more
    /// bytes than its decomposition); field names are ASCII tokens (the parsers refuse any
    /// other on the wire, the code spells its own), so only two non-ASCII names, which no
    /// field has, could match on equivalence here and not byte for byte below.
    static func same(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        if a == b { return true }
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in HTTPSyntax.equalsIgnoringCase(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) }
        }
    }

    /// ASCII case-insensitive comparison of a name's bytes with a name.
    static func same(_ a: UnsafeRawBufferPointer, _ b: String) -> Bool {
        var b = b
        return b.withUTF8 { HTTPSyntax.equalsIgnoringCase(a, UnsafeRawBufferPointer($0)) }
    }
}
