extension StringProtocol {
    /// Runs `body` on the text's UTF-8 bytes in place (a copy only for a string whose
    /// storage is not contiguous UTF-8, which native Swift strings always are). Scanning
    /// these is what a path's or name's checks cost per request, not iterating `utf8`
    /// (`Route.channelPath`, `TopicName`; issue 27).
    func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        utf8.withContiguousStorageIfAvailable(body) ?? Array(utf8).withUnsafeBufferPointer(body)
    }
}
