import Testing
@testable import SSEGateway

/// Durations and sizes as users write them.
struct OptionValueTests {
    /// Durations take ms, s, m, h or plain (possibly fractional) seconds.
    @Test(arguments: [
        ("15s", Duration.seconds(15)), ("500ms", .milliseconds(500)), ("2m", .seconds(120)), ("1h", .seconds(3600)),
        ("15", .seconds(15)), ("1.5", .milliseconds(1500)), ("0.25s", .milliseconds(250)), ("1.5m", .seconds(90)),
        ("0.001", .milliseconds(1)), ("720h", .seconds(720 * 3600)), ("007s", .seconds(7)),
    ])
    func durationAccepted(text: String, expected: Duration) throws {
        #expect(try OptionValue.duration(text, allowZero: false) == expected)
    }

    /// Negative, zero (where not allowed), sub-millisecond, too long or malformed durations are refused.
    @Test(arguments: ["", "-1", "-1s", "0", "0ms", "1d", "s", "ms", "1.", ".5", " 1s", "1s ", "1 s", "1e3", "+5",
                      "0.0001", "721h", "1.0000000001", "1S", "1sec", "99999999999999999999", "1h30m", "１"])
    func durationRefused(text: String) {
        #expect(throws: ValueProblem.self) { try OptionValue.duration(text, allowZero: false) }
    }

    /// Zero is a valid shutdown grace: stop at once.
    @Test func zeroDurationWhereAllowed() throws {
        #expect(try OptionValue.duration("0", allowZero: true) == .zero)
        #expect(try OptionValue.duration("0s", allowZero: true) == .zero)
    }

    /// Sizes take bytes or binary units in either letter case.
    @Test(arguments: [
        ("65536", 65536), ("64KiB", 65536), ("64k", 65536), ("64K", 65536), ("64kib", 65536), ("1MiB", 1 << 20),
        ("1m", 1 << 20), ("1g", 1 << 30), ("1GiB", 1 << 30), ("512B", 512), ("1", 1),
    ])
    func sizeAccepted(text: String, expected: Int) throws {
        #expect(try OptionValue.size(text) == expected)
    }

    /// Zero, negative, fractional, decimal-unit, oversized or malformed sizes are refused.
    @Test(arguments: ["", "0", "0k", "-1", "1.5k", "64KB", "64kB", "2GiB", "1025m", "k", "KiB", "64 KiB", " 1",
                      "1T", "99999999999999999999k", "0x10"])
    func sizeRefused(text: String) {
        #expect(throws: ValueProblem.self) { try OptionValue.size(text) }
    }

    /// Defaults are shown in the unit that states them exactly.
    @Test func formatting() {
        #expect(OptionValue.format(.seconds(15)) == "15s")
        #expect(OptionValue.format(.seconds(300)) == "5m")
        #expect(OptionValue.format(.seconds(7200)) == "2h")
        #expect(OptionValue.format(.milliseconds(1500)) == "1500ms")
        #expect(OptionValue.format(.zero) == "0s")
        #expect(OptionValue.format(bytes: 65536) == "64KiB")
        #expect(OptionValue.format(bytes: 1 << 20) == "1MiB")
        #expect(OptionValue.format(bytes: 1000) == "1000")
    }
}
