#!/usr/bin/env python3
"""Hold N idle HTTPS SSE subscribers from one process (scenario 7 of bench/compare.py).

sse-load speaks plain HTTP only for now, so the TLS hold uses this small client:
it connects N sockets (at most --parallel handshakes in flight), does the TLS
handshake (verifying --cacert), sends `GET /events/<prefix>/<i % topics>` with
`Accept: text/event-stream`, waits for a `200` head on each, holds them all for
--hold seconds (reading and discarding whatever arrives, e.g. heartbeats), then
closes them and prints one JSON line:

  {"established": N, "failed": 0, "connect_s": 3.2, "ended_early": 0, "error": null}

  python3 bench/tls_hold.py --port 8443 --count 10000 --cacert cert.pem --hold 10
Only the given host (127.0.0.1 by default) is contacted; every wait is bounded.
"""
import argparse, errno, json, resource, selectors, socket, ssl, sys, time


class Conn:
    __slots__ = ("index", "sock", "state", "buffer", "started")

    def __init__(self, index, sock):
        self.index, self.sock, self.state, self.buffer, self.started = index, sock, "connecting", b"", time.monotonic()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--prefix", default="tls")
    ap.add_argument("--hold", type=float, default=10.0, help="seconds to hold once all are connected")
    ap.add_argument("--cacert", required=True)
    ap.add_argument("--parallel", type=int, default=256, help="connects/handshakes in flight at once")
    ap.add_argument("--timeout", type=float, default=120.0, help="longest connect phase, seconds")
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    context = ssl.create_default_context(cafile=args.cacert)
    selector = selectors.DefaultSelector()
    first_error = None
    established = failed = ended_early = 0
    in_flight = 0
    next_index = 0
    held = []
    start = time.monotonic()
    last_connect = None
    deadline = start + args.timeout

    def fail(conn, reason):
        nonlocal failed, in_flight, first_error
        failed += 1
        in_flight -= 1
        first_error = first_error or reason
        try:
            selector.unregister(conn.sock.fileno())
        except (KeyError, ValueError):
            pass
        conn.sock.close()

    def request(conn):
        path = f"/events/{args.prefix}/{conn.index % args.topics}"
        return (f"GET {path} HTTP/1.1\r\nHost: {args.host}:{args.port}\r\n"
                "Accept: text/event-stream\r\nUser-Agent: tls_hold\r\n\r\n").encode()

    def advance(conn):
        """Drives one connection as far as it can go without blocking."""
        nonlocal established, in_flight, last_connect
        fd = conn.sock.fileno()
        if conn.state == "connecting":
            err = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                return fail(conn, f"connect: {errno.errorcode.get(err, err)}")
            conn.sock = context.wrap_socket(conn.sock, server_hostname=args.host, do_handshake_on_connect=False)
            conn.state = "handshake"
        if conn.state == "handshake":
            try:
                conn.sock.do_handshake()
            except ssl.SSLWantReadError:
                return selector.modify(fd, selectors.EVENT_READ, conn)
            except ssl.SSLWantWriteError:
                return selector.modify(fd, selectors.EVENT_WRITE, conn)
            except (ssl.SSLError, OSError) as e:
                return fail(conn, f"handshake: {e}")
            conn.buffer = request(conn)
            conn.state = "sending"
        if conn.state == "sending":
            try:
                sent = conn.sock.send(conn.buffer)
                conn.buffer = conn.buffer[sent:]
            except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                return selector.modify(fd, selectors.EVENT_WRITE, conn)
            except OSError as e:
                return fail(conn, f"send: {e}")
            if conn.buffer:
                return selector.modify(fd, selectors.EVENT_WRITE, conn)
            conn.state = "head"
            return selector.modify(fd, selectors.EVENT_READ, conn)
        if conn.state == "head":
            try:
                while b"\r\n\r\n" not in conn.buffer:
                    data = conn.sock.recv(4096)
                    if not data:
                        return fail(conn, "closed before the response head")
                    conn.buffer += data
            except (ssl.SSLWantReadError, BlockingIOError):
                return selector.modify(fd, selectors.EVENT_READ, conn)
            except OSError as e:
                return fail(conn, f"read head: {e}")
            status = conn.buffer.split(b"\r\n", 1)[0]
            if b" 200 " not in status + b" ":
                return fail(conn, f"status: {status[:60]!r}")
            conn.state, conn.buffer = "held", b""
            established += 1
            in_flight -= 1
            last_connect = time.monotonic()
            held.append(conn)
            return selector.modify(fd, selectors.EVENT_READ, conn)
        if conn.state == "held":
            drain(conn)

    def drain(conn):
        nonlocal ended_early
        try:
            while True:
                if not conn.sock.recv(65536):
                    ended_early += 1
                    conn.state = "ended"
                    selector.unregister(conn.sock.fileno())
                    return
        except (ssl.SSLWantReadError, BlockingIOError):
            return
        except OSError:
            ended_early += 1
            conn.state = "ended"
            selector.unregister(conn.sock.fileno())

    # Connect phase: keep at most --parallel connections in progress.
    while (established + failed) < args.count and time.monotonic() < deadline:
        while next_index < args.count and in_flight < args.parallel:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            conn = Conn(next_index, sock)
            next_index += 1
            in_flight += 1
            code = sock.connect_ex((args.host, args.port))
            if code not in (0, errno.EINPROGRESS):
                selector.register(sock.fileno(), selectors.EVENT_WRITE, conn)
                fail(conn, f"connect: {errno.errorcode.get(code, code)}")
                continue
            selector.register(sock.fileno(), selectors.EVENT_WRITE, conn)
        for key, _ in selector.select(timeout=0.1):
            advance(key.data)
    if (established + failed) < args.count:
        first_error = first_error or f"connect phase timed out after {args.timeout} s"
        failed += args.count - established - failed

    # Hold phase: read and discard, so nothing backs up on the server.
    hold_end = time.monotonic() + args.hold
    while time.monotonic() < hold_end:
        for key, _ in selector.select(timeout=min(0.2, max(0.0, hold_end - time.monotonic()))):
            if key.data.state == "held":
                drain(key.data)
            else:
                advance(key.data)
    for conn in held:
        try:
            conn.sock.close()
        except OSError:
            pass
    print(json.dumps({
        "established": established, "failed": failed,
        "connect_s": None if last_connect is None else round(last_connect - start, 3),
        "ended_early": ended_early, "error": first_error,
    }))


if __name__ == "__main__":
    sys.exit(main())
