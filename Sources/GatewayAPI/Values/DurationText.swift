/// Durations as the gateway's and `sse-load`'s command lines write them: `500ms`,
/// `15s`, `2m`, `1h`, or a plain number of seconds, with an optional fraction
/// (`1.5s`, `0.25`).
///
/// Promises: `parse` accepts exactly those forms (no sign, no spaces, no exponent,
/// at most 9 fraction digits), computes in whole nanoseconds without rounding
/// through `Double`, never traps, and returns a duration from 1 ms to `maximum`,
/// or zero when `allowZero`. `format` writes a duration back in the largest unit
/// that shows it exactly, so `parse(format(d)) == d`.
public enum DurationText {
    /// The largest accepted duration. It keeps deadline arithmetic (`now + duration`)
    /// far from overflow while allowing any sane setting.
    public static let maximum: Duration = .seconds(720 * 3600)

    /// Why a text is not a duration.
    public enum Problem: Error, Equatable, Sendable {
        /// Not one of the forms, or over `maximum`.
        case malformed
        /// A leading `-`.
        case negative
        /// Zero where zero is not allowed.
        case zero
        /// Above zero but under 1 ms.
        case underOneMillisecond
    }

    /// The duration `text` writes.
    public static func parse(_ text: String, allowZero: Bool) throws(Problem) -> Duration {
        if text.hasPrefix("-") { throw .negative }
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
              parts.count == 1 || (isDigits(parts[1].utf8) && parts[1].utf8.count <= 9),
              let wholeValue = Int64(whole)
        else { throw .malformed }

        // Whole part, then the fraction scaled by the unit, all in nanoseconds.
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
        guard !overflow, duration <= maximum else { throw .malformed }
        if duration == .zero {
            guard allowZero else { throw .zero }
        } else if duration < .milliseconds(1) {
            throw .underOneMillisecond
        }
        return duration
    }

    /// `duration` in the largest unit that shows it exactly: `15s`, `5m`, `500ms`.
    public static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 {
            if seconds != 0, seconds % 3600 == 0 { return "\(seconds / 3600)h" }
            if seconds != 0, seconds % 60 == 0 { return "\(seconds / 60)m" }
            return "\(seconds)s"
        }
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return "\(milliseconds)ms"
    }

    /// `duration` in seconds, for rates and reports.
    public static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    private static func isDigits<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        !bytes.isEmpty && bytes.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
