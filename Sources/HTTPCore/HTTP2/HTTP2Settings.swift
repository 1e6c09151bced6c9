/// What a server's HTTP/2 connections allow: whether HTTP/2 is spoken at all (ALPN
/// `h2` over TLS, the preface in cleartext), how many streams a connection may hold,
/// and the abuse limits past which a connection gets `GOAWAY` and is closed. The
/// request limits (`HTTPLimits`: header bytes, target, body) apply as on HTTP/1.1.
public struct HTTP2Settings: Sendable, Equatable {
    /// Off: ALPN offers `http/1.1` only and a cleartext preface is refused as HTTP/1.1 would.
    public var enabled = true
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`: open streams per connection (SSE streams included).
    public var maxConcurrentStreams = 128
    /// `RST_STREAM`s a client may send in a burst, and per second after it (rapid reset).
    public var resetBurst = 200
    public var resetsPerSecond = 50
    /// `PING` and `SETTINGS` frames a client may send in a burst, and per second after it.
    public var controlBurst = 100
    public var controlFramesPerSecond = 20
    /// `CONTINUATION` frames one header block may take.
    public var maxContinuations = 8

    public init() {}
}

/// Why the server sent a `GOAWAY` (the `reason` label of `sse_gateway_http2_goaways_total`).
public enum HTTP2GoAwayReason: String, Sendable, CaseIterable {
    /// Graceful: the server shuts down.
    case shutdown
    /// Graceful: no stream for the idle timeout.
    case idleTimeout = "idle_timeout"
    /// More `RST_STREAM`s than the reset budget (CVE-2023-44487).
    case rapidReset = "rapid_reset"
    /// A header block in more `CONTINUATION` frames than allowed (CVE-2024-27316).
    case continuationFlood = "continuation_flood"
    /// A header block that decompresses far beyond its size and past the header limit.
    case hpackBomb = "hpack_bomb"
    /// A header list past the header limit.
    case headerListTooLarge = "header_list_too_large"
    /// A stream opened beyond `SETTINGS_MAX_CONCURRENT_STREAMS`.
    case tooManyStreams = "too_many_streams"
    /// `SETTINGS` frames past the control-frame budget.
    case settingsFlood = "settings_flood"
    /// `PING` frames past the control-frame budget.
    case pingFlood = "ping_flood"
    /// Frames whose answers the client does not read (nghttp2's outbound queue limit).
    case flood
    /// A protocol violation nghttp2 found (bad frame, window overflow, bad HPACK, …).
    case protocolError = "protocol_error"

    /// The HTTP/2 error code the `GOAWAY` carries.
    var errorCode: UInt32 {
        switch self {
        case .shutdown, .idleTimeout: return 0x0  // NO_ERROR
        case .tooManyStreams, .protocolError: return 0x1  // PROTOCOL_ERROR
        case .hpackBomb: return 0x9  // COMPRESSION_ERROR
        case .rapidReset, .continuationFlood, .headerListTooLarge, .settingsFlood, .pingFlood, .flood:
            return 0xb  // ENHANCE_YOUR_CALM
        }
    }
}
