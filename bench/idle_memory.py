#!/usr/bin/env python3
"""Bytes per idle connection of the gateway: RSS delta / connections.

Starts the release gateway, opens N idle connections of one kind, and reads the
gateway's VmRSS from /proc before and after. Kinds:
  http    connections that connected and sent nothing (waiting for a request head)
  events  SSE subscribers of /events/<topic> (100 topics), receiving nothing
  state   SSE subscribers of /state/<topic> (100 topics)
With --topics T (events and state) each subscriber is one stream of T topics,
/events?topic=idle/i&topic=idle/i+1… (T consecutive of the 100 topics), the
several-topic stream of API.md; --topics 1 (the default) is /events/<topic>.

  python3 bench/idle_memory.py --kind events --count 10000
  python3 bench/idle_memory.py --kind events --count 2000 --tls
  python3 bench/idle_memory.py --kind events --count 5000 --topics 10
With --tls the gateway serves HTTPS with a throwaway EC P-256 certificate made
by the openssl command in a temporary directory, and every connection completes
its TLS handshake (Python's ssl module, verifying the certificate) first.
Only 127.0.0.1 is contacted; every wait is bounded.
"""
import argparse, os, resource, selectors, socket, ssl, subprocess, sys, tempfile, time

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")

def make_certificate(directory):
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "1", "-keyout", key, "-out", cert, "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key

def start_gateway(binary, tls_files=None):
    tls_args = ["--tls-cert", tls_files[0], "--tls-key", tls_files[1]] if tls_files else []
    proc = subprocess.Popen([binary, "--port", "0", "--heartbeat", "1h"] + tls_args, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 10
    while time.time() < deadline:
        line = proc.stderr.readline()
        if "listening on" in line:
            port = int(line.split("listening on ")[1].split(",")[0].rsplit(":", 1)[1])
            return proc, port
    proc.kill()
    raise RuntimeError("gateway did not start")

def target(kind, i, topics):
    if topics == 1:
        return f"/{kind}/idle/{i % 100}"
    return f"/{kind}?" + "&".join(f"topic=idle%2F{(i + k) % 100}" for k in range(topics))

def open_connections(port, kind, count, tls=None, topics=1):
    socks = []
    for i in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if tls:
            s = tls.wrap_socket(s, server_hostname="localhost")  # handshake completes here
        if kind != "http":
            s.sendall(f"GET {target(kind, i, topics)} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
        socks.append(s)
    if kind != "http":  # wait for every response head so each subscriber is registered
        for s in socks:
            s.settimeout(10)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    raise RuntimeError("stream closed early")
                data += chunk
            if not data.startswith(b"HTTP/1.1 200"):
                raise RuntimeError("refused: " + data.split(b"\r\n")[0].decode("latin-1"))
    return socks

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", choices=["http", "events", "state"], default="events")
    ap.add_argument("--count", type=int, default=5000)
    ap.add_argument("--binary", default=".build/release/sse-gateway")
    ap.add_argument("--tls", action="store_true", help="serve and connect over TLS")
    ap.add_argument("--topics", type=int, default=1, help="topics per stream (events, state; 1 to 32)")
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    directory = tempfile.TemporaryDirectory()
    tls_files = make_certificate(directory.name) if args.tls else None
    tls = ssl.create_default_context(cafile=tls_files[0]) if args.tls else None
    proc, port = start_gateway(args.binary, tls_files)
    try:
        # Warm up: one connection of the kind, so one-time allocations are not counted.
        warm = open_connections(port, args.kind, 50, tls, args.topics)
        time.sleep(0.5)
        before = rss_kib(proc.pid)
        socks = open_connections(port, args.kind, args.count, tls, args.topics)
        time.sleep(1.0)
        after = rss_kib(proc.pid)
        per = (after - before) * 1024 / args.count
        print(f"kind={args.kind} topics={args.topics} tls={'yes' if args.tls else 'no'} connections={args.count} "
              f"rss_before_kib={before} rss_after_kib={after} "
              f"bytes_per_connection={per:.0f}")
        for s in socks + warm:
            s.close()
    finally:
        proc.terminate()
        proc.wait(timeout=5)
        directory.cleanup()

if __name__ == "__main__":
    main()
