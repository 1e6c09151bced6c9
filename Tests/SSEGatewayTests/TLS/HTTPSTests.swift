import Foundation
import HTTPCore
import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// The in-process gateway over HTTPS: many Swift TLS clients, large values,
/// bad clients beside good ones, and certificate reload. (curl over HTTPS is
/// in `CurlTests`, the real executable's TLS start-up in `TLSStartupTests`.)
struct HTTPSTests {
    let certificates = TestCertificates.shared

    /// 200 subscribers over TLS at once, 100 of the state and 100 of the events channel,
    /// each get the current value and every event.
    @Test func manyTLSSubscribersGetStateAndEvents() async throws {
        let perChannel = 100
        try await withGateway(over: .tls) { gateway in
            _ = try await gateway.publish("/state/many", "s1")
            try await withThrowingTaskGroup(of: (Channel, [String]).self) { group in
                for i in 0..<(2 * perChannel) {
                    let channel: Channel = i % 2 == 0 ? .state : .events
                    group.addTask {
                        let stream = try await gateway.subscribe("/\(channel.rawValue)/many")
                        defer { stream.close() }
                        return (channel, try await stream.next(channel == .state ? 2 : 3, within: 30).map(\.data))
                    }
                }
                for channel in ["state", "events"] {
                    let gauge = "sse_gateway_subscribers{channel=\"\(channel)\"}"
                    #expect(try await gateway.waitForMetric(gauge, toBe: Double(perChannel), within: 30) == Double(perChannel))
                }
                _ = try await gateway.publish("/state/many", "s2")
                for i in 1...3 { _ = try await gateway.publish("/events/many", "e\(i)") }
                var received = 0
                for try await (channel, values) in group {
                    #expect(values == (channel == .state ? ["s1", "s2"] : ["e1", "e2", "e3"]))
                    received += 1
                }
                #expect(received == 2 * perChannel)
            }
        }
    }

    /// A 60 KiB value (more than one TLS record) published on each channel arrives byte for byte.
    @Test(arguments: Transport.allCases)
    func largeValuesRoundTrip(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let value = Self.largeValue(bytes: 60 * 1024)
            let events = try await gateway.subscribe("/events/big")
            defer { events.close() }
            _ = try await gateway.publish("/events/big", value)
            _ = try await gateway.publish("/state/big", value)
            let state = try await gateway.subscribe("/state/big")
            defer { state.close() }
            #expect(try await events.next()?.data == value)
            #expect(try await state.next()?.data == value)
        }
    }

    /// Lines of letters, `bytes` long.
    static func largeValue(bytes: Int) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes)
        for i in 0..<bytes { text.append(i % 97 == 96 ? 0x0a : UInt8(97 + i % 26)) }
        return String(decoding: text, as: UTF8.self)
    }

    /// Plain HTTP to the HTTPS port, a garbage ClientHello, an aborted and a stalled handshake
    /// each end their own connection while an HTTPS subscriber keeps receiving.
    ///
    /// The header timeout (which bounds a handshake) is 3 s: it bounds every publish's own
    /// connection too, and at the suites' loaded start a handshake can take over a second.
    @Test func badClientsDoNotDisturbAnHTTPSSubscriber() async throws {
        try await withGateway(over: .tls, { $0.headerTimeout = .seconds(3) }) { gateway in
            let stream = try await gateway.subscribe("/events/steady")
            defer { stream.close() }
            var sent = 0
            func stillServed() async throws -> Bool {
                sent += 1
                _ = try await gateway.publish("/events/steady", "v\(sent)")
                return try await stream.next()?.data == "v\(sent)"
            }
            #expect(try await stillServed())

            let plain = try await runToExit("/usr/bin/env", ["curl", "-sS", "--max-time", "10",
                                                             "http://127.0.0.1:\(gateway.port)/healthz"])
            #expect(plain.ending == .exit(0), "curl failed: \(plain.stderr)")
            #expect(plain.stdout.contains("This port speaks HTTPS"))
            #expect(try await stillServed())

            let garbage = try await HTTPClient.connect(port: gateway.port)
            defer { garbage.close() }
            try await garbage.send(Array(repeating: 0x16, count: 5) + Array("not a client hello at all".utf8))
            let stalled = try await HTTPClient.connect(port: gateway.port)
            defer { stalled.close() }
            try await stalled.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
            let aborted = try await HTTPClient.connect(port: gateway.port)
            try await aborted.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc])
            aborted.connection.setResetOnClose()
            aborted.close()
            #expect(try await stillServed())

            let failures = "sse_gateway_tls_handshake_failures_total"
            #expect(try await gateway.waitForMetric(failures, toBe: 4, within: 10) == 4)
            #expect(try await stillServed())
        }
    }

    /// Reloading swaps the certificate for new connections while an open stream keeps
    /// flowing; a reload of broken files keeps the certificate in use.
    @Test func reloadServesTheNewCertificateToNewConnections() async throws {
        let directory = certificates.directory + "/reload-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificate = directory + "/cert.pem", key = directory + "/key.pem"
        try certificates.copy(certificate: certificates.serverChain, key: certificates.serverKey,
                              toCertificate: certificate, key: key)
        try await withGateway(over: .tls, { $0.tlsCertificate = certificate; $0.tlsKey = key }) { gateway in
            func servedSerial() async throws -> String? {
                let client = try await gateway.connect()
                defer { client.close() }
                return client.connection.tlsPeerCertificate?.serialNumber
            }
            #expect(try await servedSerial() == TestCertificates.serverSerial)
            let stream = try await gateway.subscribe("/events/reload")
            defer { stream.close() }

            try certificates.copy(certificate: certificates.secondCertificate, key: certificates.secondKey,
                                  toCertificate: certificate, key: key)
            gateway.gateway.reloadCertificate()
            #expect(try await servedSerial() == TestCertificates.secondSerial)
            #expect(stream.client.connection.tlsPeerCertificate?.serialNumber == TestCertificates.serverSerial)
            _ = try await gateway.publish("/events/reload", "after reload")
            #expect(try await stream.next()?.data == "after reload")

            try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: certificate))
            gateway.gateway.reloadCertificate()
            #expect(try await servedSerial() == TestCertificates.secondSerial)
        }
    }
}
