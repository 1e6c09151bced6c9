import GatewayAPI

/// Why an option's text was refused: what was expected instead. The command
/// line parser turns it into a `ConfigurationError` naming the option.
struct ValueProblem: Error, Equatable, Sendable {
    let expectation: String
}

/// The text forms option values may take, and how defaults are shown.
///
/// Each reader accepts exactly the documented forms and nothing else: no
/// surrounding whitespace, no `+` sign, no thousands separators. Readers are
/// pure and never trap, whatever the input; every result lies within the bounds
/// they were given.
enum OptionValue {
    /// The largest size any option accepts: request parts are held in memory.
    static let maximumSize = 1 << 30

    /// A decimal integer in `range`.
    static func integer(_ text: String, in range: ClosedRange<Int>) throws(ValueProblem) -> Int {
        let expectation = describe(range)
        if text.hasPrefix("-"), isDigits(text.utf8.dropFirst()) {
            throw ValueProblem(expectation: "\(expectation) (it must not be negative)")
        }
        guard isDigits(text.utf8), let value = Int(text), range.contains(value) else {
            throw ValueProblem(expectation: expectation)
        }
        return value
    }

    /// A duration as `DurationText` reads it; zero only when `allowZero`; at most `bound`
    /// when one is given (its `text` and `why` then name it in the refusal).
    static func duration(_ text: String, allowZero: Bool,
                         upTo bound: (duration: Duration, text: String, why: String)? = nil) throws(ValueProblem) -> Duration {
        let most = bound.map { "up to \($0.text) (\($0.why))" } ?? "up to 720h"
        let expectation = allowZero
            ? "expected a duration such as 500ms, 15s, 2m, 1h or a number of seconds, \(most)"
            : "expected a duration above zero such as 500ms, 15s, 2m, 1h or a number of seconds, \(most)"
        let duration: Duration
        do {
            duration = try DurationText.parse(text, allowZero: allowZero)
        } catch .negative {
            throw ValueProblem(expectation: "\(expectation) (it must not be negative)")
        } catch .underOneMillisecond {
            throw ValueProblem(expectation: "\(expectation) (at least 1ms)")
        } catch {
            throw ValueProblem(expectation: expectation)
        }
        if let bound, duration > bound.duration { throw ValueProblem(expectation: expectation) }
        return duration
    }

    /// A size in bytes, at least `minimum` (1 by default) and at most `maximumSize`: a
    /// plain number of bytes, or a number with a binary unit (`k`/`KiB` = 1024, `m`/`MiB`,
    /// `g`/`GiB`; letters in any case, an optional trailing `B` on a bare number).
    /// - Parameter minimum: the least accepted (in bytes), with `why` it is the least.
    static func size(_ text: String, atLeast minimum: (bytes: Int, why: String)? = nil) throws(ValueProblem) -> Int {
        let expectation = minimum.map {
            "expected a size of at least \(format(bytes: $0.bytes)) such as 16k, 64KiB or 1MiB, up to 1GiB (\($0.why))"
        } ?? "expected a size above zero such as 65536, 64k, 64KiB or 1MiB, up to 1GiB"
        if text.hasPrefix("-") { throw ValueProblem(expectation: "\(expectation) (it must not be negative)") }
        let lowered = text.lowercased()
        let units: [(suffix: String, multiplier: Int)] = [
            ("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30),
            ("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30), ("b", 1),
        ]
        var number = Substring(lowered)
        var multiplier = 1
        for candidate in units where lowered.hasSuffix(candidate.suffix) {
            number = number.dropLast(candidate.suffix.count)
            multiplier = candidate.multiplier
            break
        }
        guard isDigits(number.utf8), let count = Int(number) else { throw ValueProblem(expectation: expectation) }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: multiplier)
        guard !overflow, bytes >= (minimum?.bytes ?? 1), bytes <= maximumSize else { throw ValueProblem(expectation: expectation) }
        return bytes
    }

    /// A yes/no value: `true`/`false`, `1`/`0`, `yes`/`no`, in any letter case.
    static func boolean(_ text: String) throws(ValueProblem) -> Bool {
        switch text.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw ValueProblem(expectation: "expected true/false, 1/0 or yes/no")
        }
    }

    /// Free text: not empty and without control characters (values end up in
    /// headers, paths and log lines, where a line break would be an injection).
    static func text(_ text: String) throws(ValueProblem) -> String {
        guard !text.isEmpty, !text.unicodeScalars.contains(where: isControl) else {
            throw ValueProblem(expectation: "expected non-empty text without control characters")
        }
        return text
    }

    /// A secret of at least `minimumBytes` bytes (UTF-8) of `text`'s rules.
    /// The message says how long it was, never what it was.
    static func secret(_ text: String, minimumBytes: Int) throws(ValueProblem) -> String {
        let secret = try self.text(text)
        guard secret.utf8.count >= minimumBytes else {
            throw ValueProblem(expectation: "expected a secret of at least \(minimumBytes) bytes "
                + "(HS256 needs a key as long as its hash); this one has \(secret.utf8.count)")
        }
        return secret
    }

    /// A single word of visible ASCII (no spaces), as an HTTP header can carry it.
    static func word(_ text: String) throws(ValueProblem) -> String {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw ValueProblem(expectation: "expected non-empty visible ASCII without spaces")
        }
        return text
    }

    /// `duration` as `--help` shows it: `15s`, `5m`, `500ms`.
    static func format(_ duration: Duration) -> String {
        DurationText.format(duration)
    }

    /// `bytes` with the largest binary unit that shows it exactly: `64KiB`, `1MiB`.
    static func format(bytes: Int) -> String {
        if bytes != 0, bytes % (1 << 20) == 0 { return "\(bytes >> 20)MiB" }
        if bytes != 0, bytes % (1 << 10) == 0 { return "\(bytes >> 10)KiB" }
        return "\(bytes)"
    }

    /// `text` as an error message quotes it: in single quotes, control
    /// characters escaped, so a stray line break cannot forge a second line.
    static func quoted(_ text: String) -> String {
        var out = "'"
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out += scalar.escaped(asASCII: true)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "'"
    }

    private static func isDigits<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        !bytes.isEmpty && bytes.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
    }

    private static func describe(_ range: ClosedRange<Int>) -> String {
        switch (range.lowerBound, range.upperBound) {
        case (0, Int.max): return "expected a whole number, 0 or more"
        case (1, Int.max): return "expected a whole number above zero"
        case let (low, high): return "expected a whole number from \(low) to \(high)"
        }
    }
}
