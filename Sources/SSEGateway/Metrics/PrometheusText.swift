/// A number a Prometheus sample can carry, written the way the text format
/// reads it: integers in plain decimal, never with an exponent or a `.0`.
protocol PrometheusNumber: Sendable {
    var prometheusText: String { get }
}

extension UInt64: PrometheusNumber {
    var prometheusText: String { String(self) }
}

extension Int: PrometheusNumber {
    var prometheusText: String { String(self) }
}

extension Double: PrometheusNumber {
    /// `NaN`, `+Inf`, `-Inf`; an integral value within Int64 as a plain
    /// integer (`3`, not `3.0` or `3e0`); anything else in Swift's shortest
    /// round-trip form, which the format's float parser accepts.
    var prometheusText: String {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Inf" : "+Inf" }
        // Integral when no significand bit lies below the binary point. Tested
        // on the bits, not with `rounded()`, which would need libm linked.
        let integral = isZero || (exponent >= 0 && Int(exponent) >= significandWidth)
        if integral, magnitude < 0x1p63 { return String(Int64(self)) }
        return description
    }
}

/// A builder for the Prometheus text exposition format, version 0.0.4.
///
/// Promises: each metric family is written once, as `# HELP`, `# TYPE`, then
/// its samples, in the order the calls were made; HELP text escapes `\` and
/// line feeds, label values also escape `"`, so no input can end a line or a
/// quoted value early (these are the only escapes the format defines; a CR is
/// not a line break to it and is written as is). Metric and label names are the program's own constants:
/// an invalid name, a counter not ending in `_total`, a histogram labelled `le`,
/// or a family written twice is a programmer error and traps. A histogram's
/// samples are its cumulative `_bucket`s (`le` ascending, `+Inf` last), `_sum` and
/// `_count`, per label set.
struct PrometheusText: Sendable {
    /// The `Content-Type` of a `/metrics` answer in this format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The exposition so far; every line, the last included, ends in `\n`.
    private(set) var text = ""
    /// Families already written, to catch a duplicate.
    private var families: Set<String> = []

    init() {}

    /// A value that can go up and down, such as open connections.
    mutating func gauge<Value: PrometheusNumber>(
        _ name: String, help: String, samples: [(labels: [(String, String)], value: Value)]
    ) {
        family(name, type: "gauge", help: help, samples: samples)
    }

    /// A gauge with one unlabelled sample.
    mutating func gauge<Value: PrometheusNumber>(_ name: String, help: String, value: Value) {
        gauge(name, help: help, samples: [(labels: [], value: value)])
    }

    /// A value that only goes up; its name must end in `_total`.
    mutating func counter<Value: PrometheusNumber>(
        _ name: String, help: String, samples: [(labels: [(String, String)], value: Value)]
    ) {
        precondition(name.hasSuffix("_total"), "counter \(name) must end in _total")
        family(name, type: "counter", help: help, samples: samples)
    }

    /// A counter with one unlabelled sample.
    mutating func counter<Value: PrometheusNumber>(_ name: String, help: String, value: Value) {
        counter(name, help: help, samples: [(labels: [], value: value)])
    }

    /// A distribution, such as delivery latency: for each label set, one
    /// `<name>_bucket{…,le="…"}` per bound with the observations at or below it
    /// (then `le="+Inf"`, every observation), `<name>_sum` and `<name>_count`.
    mutating func histogram(
        _ name: String, help: String, samples: [(labels: [(String, String)], histogram: HistogramSnapshot)]
    ) {
        header(name, type: "histogram", help: help)
        for suffix in ["_bucket", "_sum", "_count"] {
            precondition(families.insert(name + suffix).inserted, "metric family \(name + suffix) written twice")
        }
        for sample in samples {
            precondition(!sample.labels.contains { $0.0 == "le" }, "histogram \(name) cannot have a label le")
            let bounds = sample.histogram.bounds.map(\.prometheusText) + ["+Inf"]
            for (bound, count) in zip(bounds, sample.histogram.cumulativeCounts) {
                line(name + "_bucket", labels: sample.labels + [("le", bound)], value: count)
            }
            line(name + "_sum", labels: sample.labels, value: sample.histogram.sum)
            line(name + "_count", labels: sample.labels, value: sample.histogram.count)
        }
    }

    private mutating func family<Value: PrometheusNumber>(
        _ name: String, type: String, help: String, samples: [(labels: [(String, String)], value: Value)]
    ) {
        header(name, type: type, help: help)
        for sample in samples {
            line(name, labels: sample.labels, value: sample.value)
        }
    }

    /// `# HELP` and `# TYPE`, once per family.
    private mutating func header(_ name: String, type: String, help: String) {
        precondition(Self.isMetricName(name), "invalid metric name \(name)")
        precondition(families.insert(name).inserted, "metric family \(name) written twice")
        text += "# HELP \(name) \(Self.escapeHelp(help))\n"
        text += "# TYPE \(name) \(type)\n"
    }

    /// One sample: `name{label="value",…} number`.
    private mutating func line(_ name: String, labels: [(String, String)], value: some PrometheusNumber) {
        text += name
        if !labels.isEmpty {
            let pairs = labels.map { label, value in
                precondition(Self.isLabelName(label), "invalid label name \(label) on \(name)")
                return "\(label)=\"\(Self.escapeLabelValue(value))\""
            }
            text += "{" + pairs.joined(separator: ",") + "}"
        }
        text += " \(value.prometheusText)\n"
    }

    /// HELP text: `\` becomes `\\`, a line feed `\n`.
    static func escapeHelp(_ help: String) -> String {
        escape(help, quote: false)
    }

    /// A label value: `\` becomes `\\`, `"` becomes `\"`, a line feed `\n`.
    static func escapeLabelValue(_ value: String) -> String {
        escape(value, quote: true)
    }

    private static func escape(_ text: String, quote: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"" where quote: out += "\\\""
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    private static func isMetricName(_ name: String) -> Bool {
        isName(name, allowColon: true)
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with the reserved `__`.
    private static func isLabelName(_ name: String) -> Bool {
        isName(name, allowColon: false) && !name.hasPrefix("__")
    }

    private static func isName(_ name: String, allowColon: Bool) -> Bool {
        guard let first = name.utf8.first else { return false }
        func isLetter(_ b: UInt8) -> Bool {
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || (allowColon && b == 0x3A)
        }
        return isLetter(first) && name.utf8.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }
}
