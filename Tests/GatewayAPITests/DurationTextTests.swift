import GatewayAPI
import Testing

struct DurationTextTests {
    /// The forms the command lines take, exactly, and their formatting back.
    @Test func parsesAndFormats() throws {
        #expect(try DurationText.parse("250ms", allowZero: false) == .milliseconds(250))
        #expect(try DurationText.parse("1.5", allowZero: false) == .milliseconds(1500))
        #expect(try DurationText.parse("2m", allowZero: false) == .seconds(120))
        #expect(try DurationText.parse("0", allowZero: true) == .zero)
        #expect(throws: DurationText.Problem.zero) { try DurationText.parse("0s", allowZero: false) }
        #expect(throws: DurationText.Problem.negative) { try DurationText.parse("-1s", allowZero: true) }
        #expect(throws: DurationText.Problem.underOneMillisecond) { try DurationText.parse("0.0001", allowZero: true) }
        #expect(throws: DurationText.Problem.malformed) { try DurationText.parse("721h", allowZero: true) }
        for bad in ["", "s", "1e3", " 1s", "1.s", "+1"] {
            #expect(throws: DurationText.Problem.malformed) { try DurationText.parse(bad, allowZero: true) }
        }
        #expect(DurationText.format(.milliseconds(1500)) == "1500ms")
        #expect(DurationText.format(.seconds(300)) == "5m")
    }
}
