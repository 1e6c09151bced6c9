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
    /// The largest duration any option accepts. It keeps deadline arithmetic
    /// (`now + duration`) far from overflow while allowing any sane setting.
    static let maximumDuration: Duration = .seconds(720 * 3600)
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

    /// A duration: `500ms`, `15s`, `2m`, `1h`, or a plain number of seconds;
    /// the number may have a fraction (`1.5s`, `0.25`). Zero is accepted only
    /// when `allowZero`; a non-zero duration must be at least 1 ms.
    static func duration(_ text: String, allowZero: Bool) throws(ValueProblem) -> Duration {
        let expectation = allowZero
            ? "expected a duration such as 500ms, 15s, 2m, 1h or a number of seconds, up to 720h"
            : "expected a duration above zero such as 500ms, 15s, 2m, 1h or a number of seconds, up to 720h"
        if text.hasPrefix("-") { throw ValueProblem(expectation: "\(expectation) (it must not be negative)") }

        let units: [(suffix: String, nanoseconds: Int64)] = [
            ("ms", 1_000_000), ("s", 1_000_000_000), ("m", 60_000_000_000), ("h", 3_600_000_000_000),
        ]
        var number = Substring(text)
        var unit: Int64 = 1_000_000_000
        for candidate in units where text.hasSuffix(candidate.suffix) {
            number = number.dropLast(candidate.suffix.count)
            unit = candidate.nanoseconds
            break
        }
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, isDigits(whole.utf8),
              parts.count == 1 || (isDigits(parts[1].utf8) && parts[1].utf8.count <= 9)
        else { throw ValueProblem(expectation: expectation) }

        // Whole part, then the fraction scaled by the unit, all in nanoseconds.
        guard let wholeValue = Int64(whole) else { throw ValueProblem(expectation: expectation) }
        var (nanoseconds, overflow) = wholeValue.multipliedReportingOverflow(by: unit)
        if parts.count == 2 {
            let digits = parts[1]
            var scale: Int64 = 1
            for _ in digits { scale *= 10 }
            let fraction = Int64(digits) ?? 0
            // unit ≤ 3.6e12 and fraction < 1e9: compute exactly in two steps.
            let fractional = fraction * (unit / scale) + (fraction * (unit % scale)) / scale
            let sum = nanoseconds.addingReportingOverflow(fractional)
            nanoseconds = sum.partialValue
            overflow = overflow || sum.overflow
        }
        let duration = Duration.nanoseconds(nanoseconds)
        guard !overflow, duration <= maximumDuration else { throw ValueProblem(expectation: expectation) }
        if duration == .zero {
            guard allowZero else { throw ValueProblem(expectation: expectation) }
        } else if duration < .milliseconds(1) {
            throw ValueProblem(expectation: "\(expectation) (at least 1ms)")
        }
        return duration
    }

    /// A size in bytes, at least 1 and at most `maximumSize`: a plain number of
    /// bytes, or a number with a binary unit (`k`/`KiB` = 1024, `m`/`MiB`,
    /// `g`/`GiB`; letters in any case, an optional trailing `B` on a bare number).
    static func size(_ text: String) throws(ValueProblem) -> Int {
        let expectation = "expected a size above zero such as 65536, 64k, 64KiB or 1MiB, up to 1GiB"
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
        guard !overflow, bytes >= 1, bytes <= maximumSize else { throw ValueProblem(expectation: expectation) }
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

    /// A single word of visible ASCII (no spaces), as an HTTP header can carry it.
    static func word(_ text: String) throws(ValueProblem) -> String {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw ValueProblem(expectation: "expected non-empty visible ASCII without spaces")
        }
        return text
    }

    /// `duration` in the largest unit that shows it exactly: `15s`, `5m`, `500ms`.
    static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 {
            if seconds != 0, seconds % 3600 == 0 { return "\(seconds / 3600)h" }
            if seconds != 0, seconds % 60 == 0 { return "\(seconds / 60)m" }
            return "\(seconds)s"
        }
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return "\(milliseconds)ms"
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
