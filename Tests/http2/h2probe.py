#!/usr/bin/env python3
"""HTTP/2 protocol edge cases against a running sse-gateway, with hyper-h2 (the `h2`
package from PyPI) as the client. Each scenario checks what a user of the gateway
would notice and exits 0 when it held; on failure it prints why and exits 1.

    python3 Tests/http2/h2probe.py SCENARIO PORT [--tls CAFILE]

Scenarios: preface-byte-by-byte, http11-byte-by-byte, rst-leaves-hub, slow-stream, many-streams, stalled-body, stalled-headers, rapid-reset,
continuation-flood, hpack-bomb, header-list-too-large, too-many-streams,
settings-flood, ping-flood. Loopback only; every wait is bounded.
"""
from __future__ import annotations

import http.client
import json
import socket
import ssl
import struct
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings

HOST = "127.0.0.1"
PORT = 0
CAFILE: str | None = None


def fail(message: str) -> None:
    print(f"FAILED: {message}")
    sys.exit(1)


def check(condition: bool, message: str) -> None:
    if not condition:
        fail(message)


def metrics() -> dict[str, float]:
    """/metrics over HTTP/1.1 on a connection of its own."""
    status, body = request11("GET", "/metrics")
    check(status == 200, f"/metrics answered {status}")
    values = {}
    for line in body.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, value = line.rsplit(" ", 1)
        values[name] = float(value)
    return values


def wait_metric(name: str, value: float, within: float = 5) -> float | None:
    deadline = time.monotonic() + within
    last = None
    while time.monotonic() < deadline:
        last = metrics().get(name)
        if last == value:
            return last
        time.sleep(0.05)
    return last


def request11(method: str, path: str, body: bytes | None = None) -> tuple[int, str]:
    if CAFILE:
        context = ssl.create_default_context(cafile=CAFILE)
        connection = http.client.HTTPSConnection("localhost", PORT, timeout=10, context=context)
    else:
        connection = http.client.HTTPConnection(HOST, PORT, timeout=10)
    try:
        connection.request(method, path, body=body)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def publish(topic: str, value: str) -> dict:
    status, body = request11("POST", f"/events/{topic}", value.encode())
    check(status == 200, f"publish answered {status}: {body}")
    return json.loads(body)


class Client:
    """One HTTP/2 connection (prior knowledge in cleartext, ALPN h2 over TLS)."""

    def __init__(self, settings: dict | None = None):
        raw = socket.create_connection((HOST, PORT), timeout=10)
        if CAFILE:
            context = ssl.create_default_context(cafile=CAFILE)
            context.set_alpn_protocols(["h2"])
            raw = context.wrap_socket(raw, server_hostname="localhost")
            check(raw.selected_alpn_protocol() == "h2", f"ALPN chose {raw.selected_alpn_protocol()}")
        self.sock = raw
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.initiate_connection()
        if settings:
            self.conn.update_settings(settings)
        self.flush()
        self.data: dict[int, bytes] = {}
        self.headers: dict[int, dict] = {}
        self.ended: set[int] = set()
        self.reset: dict[int, int] = {}
        self.goaway: int | None = None
        self.closed = False
        self.auto_ack = True

    def flush(self) -> None:
        out = self.conn.data_to_send()
        if out:
            self.sock.sendall(out)

    def send_raw(self, data: bytes) -> bool:
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.closed = True
            return False

    def get(self, path: str, end: bool = True, flush: bool = True) -> int:
        stream = self.conn.get_next_available_stream_id()
        self.conn.send_headers(stream, [(":method", "GET"), (":path", path), (":scheme", "https" if CAFILE else "http"),
                                        (":authority", f"{HOST}:{PORT}")], end_stream=end)
        if flush:
            self.flush()
        return stream

    def pump(self, seconds: float, until=None) -> None:
        """Reads and handles frames for up to `seconds`, or until `until()` holds."""
        deadline = time.monotonic() + seconds
        while not self.closed and time.monotonic() < deadline:
            if until and until():
                return
            self.sock.settimeout(max(0.01, min(0.2, deadline - time.monotonic())))
            try:
                chunk = self.sock.recv(65536)
            except (socket.timeout, TimeoutError):
                continue
            except (ConnectionResetError, ssl.SSLError, OSError):
                self.closed = True
                return
            if not chunk:
                self.closed = True
                return
            try:
                events = self.conn.receive_data(chunk)
            except Exception:  # the server's frames after our own abuse may confuse h2's state
                events = []
                if b"\x00\x00\x08\x07" in chunk:
                    at = chunk.index(b"\x00\x00\x08\x07")
                    self.goaway = struct.unpack(">I", chunk[at + 13:at + 17])[0]
            for event in events:
                if isinstance(event, h2.events.ResponseReceived):
                    self.headers[event.stream_id] = dict(event.headers)
                elif isinstance(event, h2.events.DataReceived):
                    self.data[event.stream_id] = self.data.get(event.stream_id, b"") + event.data
                    if self.auto_ack:
                        self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    self.ended.add(event.stream_id)
                elif isinstance(event, h2.events.StreamReset):
                    self.reset[event.stream_id] = event.error_code
                elif isinstance(event, h2.events.ConnectionTerminated):
                    self.goaway = event.error_code
            try:
                self.flush()
            except OSError:
                self.closed = True

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def expect_goaway(client: Client, code: int, reason: str, before: float) -> None:
    client.pump(5, until=lambda: client.goaway is not None)
    client.pump(2)  # then the close
    check(client.goaway == code, f"expected GOAWAY {code:#x} for {reason}, got {client.goaway}")
    check(client.closed, "the connection stays open after the GOAWAY")
    after = wait_metric(f'sse_gateway_http2_goaways_total{{reason="{reason}"}}', before + 1)
    check(after == before + 1, f"goaways_total{{reason={reason}}} is {after}, expected {before + 1}")
    status, _ = request11("GET", "/healthz")
    check(status == 200, "the gateway stopped serving")


def goaway_count(reason: str) -> float:
    return metrics().get(f'sse_gateway_http2_goaways_total{{reason="{reason}"}}', 0)


# -- scenarios ----------------------------------------------------------------------

def rst_leaves_hub() -> None:
    """A stream the client resets leaves the hub at once; the connection and its other stream go on."""
    topic = "h2probe-rst"
    client = Client()
    first = client.get(f"/events/{topic}")
    second = client.get(f"/events/{topic}")
    client.pump(5, until=lambda: first in client.headers and second in client.headers)
    check(client.headers.get(first, {}).get(":status") == "200", "first stream not answered 200")
    check(wait_metric('sse_gateway_subscribers{channel="events"}', 2) == 2, "two subscribers expected")
    client.conn.reset_stream(first, error_code=8)
    client.flush()
    check(wait_metric('sse_gateway_subscribers{channel="events"}', 1) == 1, "the reset stream is still subscribed")
    reply = publish(topic, "after-reset")
    check(reply["subscribers"] == 1, f"publish reached {reply['subscribers']} subscribers")
    client.pump(5, until=lambda: b"after-reset" in client.data.get(second, b""))
    check(b"data: after-reset" in client.data.get(second, b""), "the other stream did not receive the event")
    check(not client.closed and client.goaway is None, "the connection ended")
    client.close()
    check(wait_metric('sse_gateway_subscribers{channel="events"}', 0) == 0, "closing the connection left subscribers")
    check(wait_metric("sse_gateway_http2_streams", 0) == 0, "streams gauge not back to 0")


def slow_stream() -> None:
    """A stream whose window stays closed is a slow reader: cut by the events queue limit
    (the gateway runs with --events-queue-limit 16) while the other stream keeps receiving."""
    topic = "h2probe-slow"
    client = Client(settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 200})
    client.auto_ack = False
    slow = client.get(f"/events/{topic}")
    client.pump(5, until=lambda: slow in client.headers)
    fast_client = Client()
    fast = fast_client.get(f"/events/{topic}")
    fast_client.pump(5, until=lambda: fast in fast_client.headers)
    check(wait_metric('sse_gateway_subscribers{channel="events"}', 2) == 2, "two subscribers expected")
    before = metrics().get("sse_gateway_slow_subscriber_disconnects_total", 0)
    for i in range(200):
        publish(topic, f"value-{i}-" + "x" * 100)
        fast_client.pump(0.01)
    fast_client.pump(5, until=lambda: b"value-199-" in fast_client.data.get(fast, b""))
    check(b"value-199-" in fast_client.data.get(fast, b""), "the fast reader missed events")
    client.pump(5, until=lambda: slow in client.reset)
    check(slow in client.reset, "the slow stream was not reset")
    after = metrics().get("sse_gateway_slow_subscriber_disconnects_total", 0)
    check(after >= before + 1, "slow subscriber not counted")
    check(wait_metric('sse_gateway_subscribers{channel="events"}', 1) == 1, "the slow stream is still subscribed")
    client.close()
    fast_client.close()


def many_streams() -> None:
    """100 SSE streams on one connection, all open and all receiving."""
    client = Client()
    streams = [client.get(f"/events/h2probe-many-{i % 10}") for i in range(100)]
    client.pump(10, until=lambda: all(s in client.headers for s in streams))
    check(all(client.headers.get(s, {}).get(":status") == "200" for s in streams), "not every stream answered 200")
    for i in range(10):
        publish(f"h2probe-many-{i}", f"to-{i}")
    client.pump(10, until=lambda: all(f"to-{i % 10}".encode() in client.data.get(s, b"") for i, s in enumerate(streams)))
    missing = [s for i, s in enumerate(streams) if f"to-{i % 10}".encode() not in client.data.get(s, b"")]
    check(not missing, f"{len(missing)} streams missed their event")
    # Earlier scenarios' connections may still be closing on the server's side.
    check(wait_metric('sse_gateway_connections{protocol="http2"}', 1) == 1, "expected one HTTP/2 connection")
    client.close()


def stalled_body() -> None:
    """A request whose body stops arriving is answered 408 on its stream after the body
    timeout (the gateway runs with --body-timeout 1s); the connection goes on."""
    client = Client()
    stream = client.conn.get_next_available_stream_id()
    client.conn.send_headers(stream, [(":method", "POST"), (":path", "/events/h2probe-stall"), (":scheme", "http"),
                                      (":authority", "x"), ("content-length", "10")])
    client.conn.send_data(stream, b"abc")
    client.flush()
    started = time.monotonic()
    client.pump(6, until=lambda: stream in client.headers)
    waited = time.monotonic() - started
    check(client.headers.get(stream, {}).get(":status") == "408", f"stalled request answered {client.headers.get(stream)}")
    check(0.5 < waited < 5, f"answered after {waited:.1f} s, with a 1 s body timeout")
    check(not client.closed and client.goaway is None, "the connection ended")
    other = client.get("/healthz")
    client.pump(5, until=lambda: other in client.ended)
    check(client.headers.get(other, {}).get(":status") == "200", "the connection stopped serving")
    client.close()


def stalled_headers() -> None:
    """A header block left unfinished (HEADERS without END_HEADERS, no CONTINUATION) ends
    the connection after the body timeout with a GOAWAY (NO_ERROR, reason idle_timeout)."""
    before = goaway_count("idle_timeout")
    client = Client()
    client.pump(1)  # the SETTINGS exchange first: nothing of ours may follow the unfinished block
    block = client.conn.encoder.encode([(":method", "GET"), (":path", "/healthz"), (":scheme", "http"),
                                        (":authority", "x")])
    client.send_raw(frame(0x1, 0x0, 1, block))
    expect_goaway(client, 0x0, "idle_timeout", before)


def rapid_reset() -> None:
    before = goaway_count("rapid_reset")
    client = Client()
    for _ in range(1000):
        stream = client.get("/healthz", end=False, flush=False)
        client.conn.reset_stream(stream, error_code=8)
        if not client.send_raw(client.conn.data_to_send()):
            break
    expect_goaway(client, 0xB, "rapid_reset", before)


def continuation_flood() -> None:
    before = goaway_count("continuation_flood")
    client = Client()
    block = client.conn.encoder.encode([(":method", "GET"), (":path", "/healthz"), (":scheme", "http"),
                                        (":authority", "x")])
    client.send_raw(frame(0x1, 0x0, 1, block))  # HEADERS without END_HEADERS
    for _ in range(100):
        if not client.send_raw(frame(0x9, 0x0, 1, client.conn.encoder.encode([("x-a", "b")]))):
            break
    expect_goaway(client, 0xB, "continuation_flood", before)


def hpack_bomb() -> None:
    before = goaway_count("hpack_bomb")
    client = Client()
    big = "b" * 1000  # small enough that the dynamic table keeps it beside the pseudo-headers
    stream = client.conn.get_next_available_stream_id()
    client.conn.send_headers(stream, [(":method", "GET"), (":path", "/healthz"), (":scheme", "http"),
                                      (":authority", "x"), ("x-bomb", big)], end_stream=True)
    client.flush()
    client.pump(5, until=lambda: stream in client.ended)
    check(client.headers.get(stream, {}).get(":status") == "200", "the first request was not answered")
    # The same field 100 times: one byte each, a reference to the dynamic table.
    stream = client.conn.get_next_available_stream_id()
    client.conn.send_headers(stream, [(":method", "GET"), (":path", "/healthz"), (":scheme", "http"),
                                      (":authority", "x")] + [("x-bomb", big)] * 100, end_stream=True)
    client.flush()
    expect_goaway(client, 0x9, "hpack_bomb", before)


def header_list_too_large() -> None:
    before = goaway_count("header_list_too_large")
    client = Client()
    client.conn.max_outbound_frame_size = 16384
    stream = client.conn.get_next_available_stream_id()
    client.conn.send_headers(stream, [(":method", "GET"), (":path", "/healthz"), (":scheme", "http"),
                                      (":authority", "x"), ("x-large", "l" * 20000)], end_stream=True)
    client.flush()
    expect_goaway(client, 0xB, "header_list_too_large", before)


def too_many_streams() -> None:
    before = goaway_count("too_many_streams")
    client = Client()
    limit = 128
    for i in range(limit + 1):
        client.get(f"/events/h2probe-limit-{i}", flush=False)
    client.send_raw(client.conn.data_to_send())
    expect_goaway(client, 0x1, "too_many_streams", before)
    check(wait_metric('sse_gateway_subscribers{channel="events"}', 0) == 0, "the refused connection left subscribers")


def settings_flood() -> None:
    before = goaway_count("settings_flood")
    client = Client()
    for _ in range(1000):
        if not client.send_raw(frame(0x4, 0x0, 0, b"")):
            break
    expect_goaway(client, 0xB, "settings_flood", before)


def ping_flood() -> None:
    before = goaway_count("ping_flood")
    client = Client()
    for i in range(1000):
        if not client.send_raw(frame(0x6, 0x0, 0, struct.pack(">Q", i))):
            break
    expect_goaway(client, 0xB, "ping_flood", before)


def raw_socket():
    raw = socket.create_connection((HOST, PORT), timeout=10)
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if CAFILE:
        context = ssl.create_default_context(cafile=CAFILE)
        context.set_alpn_protocols(["h2"] if sys.argv[1].startswith("preface") else ["http/1.1"])
        raw = context.wrap_socket(raw, server_hostname="localhost")
    return raw


def preface_byte_by_byte() -> None:
    """A client whose preface arrives a byte at a time (each its own read on the server)
    is still recognised as HTTP/2 and served."""
    sock = raw_socket()
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    opening = conn.data_to_send()
    for i in range(5):
        sock.sendall(opening[i:i + 1])
        time.sleep(0.15)
    sock.sendall(opening[5:])
    client = Client.__new__(Client)
    client.sock, client.conn = sock, conn
    client.data, client.headers, client.ended, client.reset = {}, {}, set(), {}
    client.goaway, client.closed, client.auto_ack = None, False, True
    stream = client.get("/healthz")
    client.pump(10, until=lambda: stream in client.ended)
    check(client.headers.get(stream, {}).get(":status") == "200", f"no 200: {client.headers} goaway={client.goaway}")
    check(client.data.get(stream, b"").startswith(b"ok"), f"body {client.data.get(stream)!r}")
    client.close()


def http11_byte_by_byte() -> None:
    """Short first reads of HTTP/1.1 requests: `G` alone, and `P` (the preface's first
    byte) alone, each then the rest: both served as HTTP/1.1, nothing lost."""
    for first, rest in [(b"G", b"ET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
                        (b"P", b"OST /events/bytes HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nConnection: close\r\n\r\nv")]:
        sock = raw_socket()
        sock.sendall(first)
        time.sleep(0.2)
        sock.sendall(rest)
        answer = b""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        sock.close()
        check(answer.startswith(b"HTTP/1.1 200"), f"{first + rest!r} answered {answer[:80]!r}")


SCENARIOS = {
    "preface-byte-by-byte": preface_byte_by_byte,
    "http11-byte-by-byte": http11_byte_by_byte,
    "rst-leaves-hub": rst_leaves_hub,
    "slow-stream": slow_stream,
    "many-streams": many_streams,
    "stalled-body": stalled_body,
    "stalled-headers": stalled_headers,
    "rapid-reset": rapid_reset,
    "continuation-flood": continuation_flood,
    "hpack-bomb": hpack_bomb,
    "header-list-too-large": header_list_too_large,
    "too-many-streams": too_many_streams,
    "settings-flood": settings_flood,
    "ping-flood": ping_flood,
}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in SCENARIOS:
        print(__doc__)
        sys.exit(2)
    PORT = int(sys.argv[2])
    if len(sys.argv) == 5 and sys.argv[3] == "--tls":
        CAFILE = sys.argv[4]
    SCENARIOS[sys.argv[1]]()
    print("ok")
