import Glibc
import Testing
import TestSupport

/// `SIGHUP` is the package's `ExecReload` (`systemctl reload sse-gateway`): without
/// TLS there is nothing to reload, and it must not stop the service.
struct ReloadSignalTests {
    /// Plain HTTP: SIGHUP is logged, the open stream and new requests are still served.
    @Test func sighupWithoutTLSKeepsServing() async throws {
        try await withGatewayProcess { gateway in
            let stream = try await gateway.subscribe("/events/hup")
            gateway.child.send(SIGHUP)
            #expect(await gateway.child.stderr.wait(upTo: 5) { $0.contains("SIGHUP: no TLS certificate to reload") })
            #expect(try await gateway.publish("/events/hup", "after") == 1)
            #expect(try await stream.next()?.data == "after")
            #expect(try await gateway.send("GET", "/healthz").status == 200)
            stream.close()
        }
    }
}
