import CStreamsSSL
import Glibc

/// A real TLS ClientHello, for tests of clients that give up mid-handshake:
/// the first flight OpenSSL's client would send (TLS 1.2–1.3, SNI, ALPN
/// `http/1.1`, a fresh random and key share each time), made by starting a
/// client handshake on memory buffers and taking what it wants to send. A test
/// writes it, or a part of it, on a plain socket and leaves when it likes.
public enum ClientHello {
    /// A fresh ClientHello naming `serverName`, as the bytes of its TLS records.
    public static func make(serverName: String = "localhost") throws -> [UInt8] {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw Failure("SSL_CTX_new") }
        defer { SSL_CTX_free(context) }
        _ = cstreams_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        guard let ssl = SSL_new(context) else { throw Failure("SSL_new") }
        defer { SSL_free(ssl) }  // frees both buffers too
        guard let input = BIO_new(BIO_s_mem()) else { throw Failure("BIO_new") }
        guard let output = BIO_new(BIO_s_mem()) else {
            BIO_free(input)
            throw Failure("BIO_new")
        }
        SSL_set_bio(ssl, input, output)
        SSL_set_connect_state(ssl)
        _ = cstreams_SSL_set_tlsext_host_name(ssl, serverName)
        _ = cstreams_SSL_offer_alpn_http11(ssl)
        // Nothing to read yet: the handshake stops after writing the ClientHello.
        guard SSL_do_handshake(ssl) == -1, SSL_get_error(ssl, -1) == SSL_ERROR_WANT_READ else {
            ERR_clear_error()
            throw Failure("SSL_do_handshake did not stop for the server's answer")
        }
        let pending = Int(BIO_ctrl_pending(output))
        guard pending > 5 else { throw Failure("no ClientHello written (\(pending) bytes)") }
        let bytes = [UInt8](unsafeUninitializedCapacity: pending) { buffer, initialized in
            initialized = Int(max(0, BIO_read(output, buffer.baseAddress, Int32(pending))))
        }
        guard bytes.count == pending, bytes[0] == 0x16 else { throw Failure("not a handshake record") }
        return bytes
    }

    /// OpenSSL could not make a ClientHello.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ step: String) { description = "ClientHello: \(step) failed" }
    }
}
