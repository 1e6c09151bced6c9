
/// HTTP dates (RFC 9110 §5.6.7) without Foundation formatters or the C locale:
/// writes IMF-fixdate, reads all three forms a recipient must accept.
/// Times are whole seconds since the Unix epoch, always UTC. The one place
/// HTTP dates are written and read (the `Date` header, `Last-Modified`,
/// `If-Modified-Since`, certificate expiry in logs).
public enum HTTPDate {
    /// The `Date` header value for now, formatted at most once a second (`HTTPDateCache`).
    public static func now() -> String { HTTPDateCache.shared.value }

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for 784111777.
    public static func format(_ seconds: Int) -> String {
        let days = floorDiv(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = ((days % 7) + 7 + 4) % 7  // 1970-01-01 was a Thursday
        return "\(weekdays[weekday]), \(pad(day)) \(months[month - 1]) \(year) "
            + "\(pad(secondOfDay / 3600)):\(pad(secondOfDay / 60 % 60)):\(pad(secondOfDay % 60)) GMT"
    }

    /// Reads IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
    /// The weekday is not checked. Anything else is nil.
    public static func parse(_ text: String) -> Int? {
        let words = text.split(separator: " ")
        let day: Substring, month: Substring, year: Substring, time: Substring
        switch words.count {
        case 6 where words[0].hasSuffix(",") && words[5] == "GMT":
            (day, month, year, time) = (words[1], words[2], words[3], words[4])
        case 4 where words[0].hasSuffix(",") && words[3] == "GMT":
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            (day, month, year, time) = (parts[0], parts[1], parts[2], words[2])
        case 5 where !words[0].hasSuffix(","):
            (day, month, year, time) = (words[2], words[1], words[4], words[3])
        default:
            return nil
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3,
              let d = number(day, digits: 1...2), (1...31).contains(d),
              let m = months.firstIndex(where: { $0 == month }),
              var y = number(year, digits: 2...4),
              let hh = number(clock[0], digits: 2...2), hh < 24,
              let mm = number(clock[1], digits: 2...2), mm < 60,
              let ss = number(clock[2], digits: 2...2), ss <= 60
        else { return nil }
        if year.count == 2 { y += y < 70 ? 2000 : 1900 }  // RFC 850's two-digit years
        return days(fromCivil: y, m + 1, d) * 86_400 + hh * 3600 + mm * 60 + ss
    }

    private static func number(_ text: Substring, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(text.utf8.count),
              text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int(text)
    }

    private static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private static func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }

    // Days since 1970-01-01 <-> proleptic Gregorian date (Howard Hinnant's algorithms).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
