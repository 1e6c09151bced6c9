/// The `Last-Event-ID` header of a resuming `/events` subscriber, read as the id to
/// resume after.
///
/// Promises (API.md, "Subscribing"): an id is 1 to 20 ASCII decimal digits whose value
/// fits a `UInt64`; anything else (empty, a sign, spaces, non-ASCII digits, overflow)
/// counts as absent, so a bad header never refuses a subscription. The cursor of a
/// several-topic stream is read beside it (`StreamCursor`).
public enum LastEventID {
    /// The id `text` names, or nil when it names none.
    public static func parse(_ text: String?) -> UInt64? {
        guard let text, !text.isEmpty, text.utf8.count <= 20,
              text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(text)
    }
}
