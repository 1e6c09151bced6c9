/// A checker of the Prometheus text exposition format 0.0.4, as strict as a scraper:
/// what `/metrics` answers and what `PrometheusText` writes must pass it.
///
/// It checks the line syntax (names, quoted and escaped label values, numbers, a
/// final line feed), that `# HELP` and `# TYPE` come at most once per family and
/// `# TYPE` before the family's samples, that a family's samples are contiguous and
/// never repeated, and, for histograms, that each label set has `le` buckets in
/// ascending order ending in `+Inf`, cumulative counts that never decrease, and a
/// `_sum` and a `_count` equal to the `+Inf` bucket.
enum ExpositionFormat {
    /// What is wrong with `text`, one message per problem; empty when it is valid.
    static func problems(in text: String) -> [String] {
        var checker = Checker()
        if !text.isEmpty && !text.hasSuffix("\n") { checker.problems.append("the last line has no line feed") }
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.isEmpty {
            checker.check(Array(line.utf8), number: number + 1)
        }
        checker.checkHistograms()
        return checker.problems
    }

    private struct Sample {
        var name: String
        var labels: [(String, String)]
        var value: Double
    }

    /// One histogram label set's samples, in the order they came.
    private struct Series {
        var buckets: [(le: Double, count: Double)] = []
        var sum: Double?
        var count: Double?
    }

    private struct Checker {
        var problems: [String] = []
        var helps: Set<String> = []
        var types: [String: String] = [:]
        /// The family of the previous sample, and the families whose samples ended.
        var current: String?
        var finished: Set<String> = []
        var seen: Set<String> = []
        var histograms: [String: [String: Series]] = [:]

        mutating func check(_ line: [UInt8], number: Int) {
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("# HELP ") || text.hasPrefix("# TYPE ") {
                let words = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                guard words.count >= 3, isName(Array(words[2].utf8), colon: true) else {
                    return problems.append("line \(number): a HELP or TYPE without a valid name: \(text)")
                }
                let name = String(words[2])
                if words[1] == "HELP" {
                    if !helps.insert(name).inserted { problems.append("line \(number): a second HELP for \(name)") }
                } else {
                    let type = words.count == 4 ? String(words[3]) : ""
                    if !["counter", "gauge", "histogram", "summary", "untyped"].contains(type) {
                        problems.append("line \(number): unknown type \(type) for \(name)")
                    }
                    if types[name] != nil { problems.append("line \(number): a second TYPE for \(name)") }
                    if current == name || finished.contains(name) {
                        problems.append("line \(number): the TYPE of \(name) after its samples")
                    }
                    types[name] = type
                }
                return
            }
            if text.hasPrefix("#") { return }
            guard let sample = parse(line) else { return problems.append("line \(number): not a sample: \(text)") }
            let family = family(of: sample.name)
            if family != current {
                if finished.contains(family) { problems.append("line \(number): the samples of \(family) are not together") }
                if let current { finished.insert(current) }
                current = family
            }
            let key = sample.name + "{" + sample.labels.map { "\($0.0)=\($0.1)" }.sorted().joined(separator: ",") + "}"
            if !seen.insert(key).inserted { problems.append("line \(number): \(key) twice") }
            if types[family] == "histogram" { collect(sample, of: family, number: number) }
        }

        /// A histogram's sample, kept by label set (`le` aside) for `checkHistograms`.
        mutating func collect(_ sample: Sample, of family: String, number: Int) {
            let series = sample.labels.filter { $0.0 != "le" }.map { "\($0.0)=\($0.1)" }.sorted().joined(separator: ",")
            let le = sample.labels.first { $0.0 == "le" }?.1
            switch String(sample.name.dropFirst(family.count)) {
            case "_bucket":
                guard let le, let bound = Double(le) else {
                    return problems.append("line \(number): a bucket of \(family) without a numeric le")
                }
                histograms[family, default: [:]][series, default: Series()].buckets.append((bound, sample.value))
            case "_sum": histograms[family, default: [:]][series, default: Series()].sum = sample.value
            case "_count": histograms[family, default: [:]][series, default: Series()].count = sample.value
            default: problems.append("line \(number): \(sample.name) in histogram \(family)")
            }
            if le != nil && !sample.name.hasSuffix("_bucket") {
                problems.append("line \(number): \(sample.name) has an le label")
            }
        }

        mutating func checkHistograms() {
            for (family, seriesByLabels) in histograms {
                for (labels, series) in seriesByLabels {
                    let name = "\(family){\(labels)}"
                    let bounds = series.buckets.map(\.le)
                    if bounds.last != .infinity { problems.append("\(name): the last bucket is not le=\"+Inf\"") }
                    if !zip(bounds, bounds.dropFirst()).allSatisfy({ $0 < $1 }) {
                        problems.append("\(name): le not strictly ascending: \(bounds)")
                    }
                    let counts = series.buckets.map(\.count)
                    if !zip(counts, counts.dropFirst()).allSatisfy({ $0 <= $1 }) {
                        problems.append("\(name): bucket counts not cumulative: \(counts)")
                    }
                    if series.sum == nil { problems.append("\(name): no _sum") }
                    if let count = series.count {
                        if count != counts.last { problems.append("\(name): _count \(count) is not the +Inf bucket's") }
                    } else {
                        problems.append("\(name): no _count")
                    }
                }
            }
        }

        /// The family a sample belongs to: its own name, or a histogram's (or summary's) for a suffixed one.
        func family(of name: String) -> String {
            if types[name] != nil { return name }
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                let base = String(name.dropLast(suffix.count))
                if types[base] == "histogram" || (types[base] == "summary" && suffix != "_bucket") { return base }
            }
            return name
        }

        /// `name{label="value",…} number [timestamp]`, or nil when the line is not that.
        func parse(_ line: [UInt8]) -> Sample? {
            var i = 0
            while i < line.count && line[i] != UInt8(ascii: "{") && line[i] != UInt8(ascii: " ") { i += 1 }
            let name = Array(line[..<i])
            guard isName(name, colon: true), i < line.count else { return nil }
            var labels: [(String, String)] = []
            if line[i] == UInt8(ascii: "{") {
                i += 1
                while i < line.count && line[i] != UInt8(ascii: "}") {
                    let start = i
                    while i < line.count && line[i] != UInt8(ascii: "=") { i += 1 }
                    let label = Array(line[start..<i])
                    guard isName(label, colon: false), i + 1 < line.count, line[i + 1] == UInt8(ascii: "\"") else { return nil }
                    i += 2
                    var value: [UInt8] = []
                    while i < line.count && line[i] != UInt8(ascii: "\"") {
                        if line[i] == UInt8(ascii: "\\") {
                            guard i + 1 < line.count else { return nil }
                            switch line[i + 1] {
                            case UInt8(ascii: "\\"), UInt8(ascii: "\""): value.append(line[i + 1])
                            case UInt8(ascii: "n"): value.append(UInt8(ascii: "\n"))
                            default: return nil
                            }
                            i += 2
                        } else {
                            value.append(line[i])
                            i += 1
                        }
                    }
                    guard i < line.count else { return nil }
                    i += 1
                    labels.append((String(decoding: label, as: UTF8.self), String(decoding: value, as: UTF8.self)))
                    if i < line.count && line[i] == UInt8(ascii: ",") { i += 1 }
                }
                guard i < line.count else { return nil }
                i += 1
                guard Set(labels.map(\.0)).count == labels.count else { return nil }
            }
            let rest = String(decoding: line[i...], as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
            guard rest.count == 2 || rest.count == 3, rest[0].isEmpty, let value = number(rest[1]) else { return nil }
            if rest.count == 3 && Int64(rest[2]) == nil { return nil }
            return Sample(name: String(decoding: name, as: UTF8.self), labels: labels, value: value)
        }

        /// A float as Go's `ParseFloat` reads the format's values: decimal, `NaN`, `+Inf`, `-Inf`.
        func number(_ text: Substring) -> Double? {
            if text == "NaN" { return .nan }
            if text == "+Inf" { return .infinity }
            if text == "-Inf" { return -.infinity }
            guard text.allSatisfy({ "0123456789.eE+-".contains($0) }) else { return nil }
            return Double(text)
        }

        /// `[a-zA-Z_:][a-zA-Z0-9_:]*` for a metric, the same without `:` for a label.
        func isName(_ bytes: [UInt8], colon: Bool) -> Bool {
            func letter(_ b: UInt8) -> Bool {
                (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || (colon && b == 0x3A)
            }
            guard let first = bytes.first, letter(first) else { return false }
            return bytes.allSatisfy { letter($0) || ($0 >= 0x30 && $0 <= 0x39) }
        }
    }
}
