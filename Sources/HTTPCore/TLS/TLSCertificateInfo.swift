import CStreamsSSL
import Glibc

/// What a log line or a test needs to know of a certificate: who it names,
/// its serial number, and when it is valid. A copy; holds no OpenSSL object.
public struct TLSCertificateInfo: Sendable, Equatable, CustomStringConvertible {
    /// The subject, e.g. `CN=localhost, O=Example`.
    public let subject: String
    /// The issuer, in the same form.
    public let issuer: String
    /// The serial number in upper-case hex, e.g. `1001`.
    public let serialNumber: String
    /// Start and end of validity, in seconds since the epoch (UTC).
    public let notBefore: Int64
    public let notAfter: Int64

    /// Reads `certificate` (borrowed; not freed here).
    init(_ certificate: OpaquePointer) {
        subject = Self.name(X509_get_subject_name(certificate))
        issuer = Self.name(X509_get_issuer_name(certificate))
        if let hex = cstreams_X509_serial_hex(certificate) {
            serialNumber = String(cString: hex)
            cstreams_OPENSSL_free(hex)
        } else {
            serialNumber = ""
        }
        notBefore = cstreams_ASN1_TIME_epoch(X509_get0_notBefore(certificate))
        notAfter = cstreams_ASN1_TIME_epoch(X509_get0_notAfter(certificate))
    }

    /// Whether the certificate's validity ended before `now` (seconds since the epoch).
    public func isExpired(now: Int64 = Int64(time(nil))) -> Bool {
        notAfter < now
    }

    /// When validity ends, as an HTTP date (`Wed, 02 Dec 2026 12:00:00 GMT`).
    public var expiry: String { HTTPDate.format(Int(notAfter)) }

    public var description: String {
        "\(subject), serial \(serialNumber), valid until \(expiry)"
    }

    /// An X509_NAME as `CN=…,O=…` (RFC 2253).
    private static func name(_ name: OpaquePointer?) -> String {
        guard let name, let text = cstreams_X509_NAME_text(name) else { return "" }
        defer { cstreams_OPENSSL_free(text) }
        return String(cString: text)
    }
}
