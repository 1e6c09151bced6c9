#!/usr/bin/env python3
"""Bytes per idle connection of the gateway: RSS delta / connections.

Starts the release gateway, opens N idle connections of one kind, and reads the
gateway's VmRSS from /proc before and after. Kinds:
  http    connections that connected and sent nothing (waiting for a request head)
  events  SSE subscribers of /events/<topic> (100 topics), receiving nothing
  state   SSE subscribers of /state/<topic> (100 topics)

  python3 bench/idle_memory.py --kind events --count 10000
Only 127.0.0.1 is contacted; every wait is bounded.
"""
import argparse, os, resource, selectors, socket, subprocess, sys, time

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")

def start_gateway(binary):
    proc = subprocess.Popen([binary, "--port", "0", "--heartbeat", "1h"], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 10
    while time.time() < deadline:
        line = proc.stderr.readline()
        if "listening on" in line:
            port = int(line.split("listening on ")[1].split(",")[0].rsplit(":", 1)[1])
            return proc, port
    proc.kill()
    raise RuntimeError("gateway did not start")

def open_connections(port, kind, count):
    socks = []
    for i in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if kind != "http":
            s.sendall(f"GET /{kind}/idle/{i % 100} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
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
    return socks

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", choices=["http", "events", "state"], default="events")
    ap.add_argument("--count", type=int, default=5000)
    ap.add_argument("--binary", default=".build/release/sse-gateway")
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    proc, port = start_gateway(args.binary)
    try:
        # Warm up: one connection of the kind, so one-time allocations are not counted.
        warm = open_connections(port, args.kind, 50)
        time.sleep(0.5)
        before = rss_kib(proc.pid)
        socks = open_connections(port, args.kind, args.count)
        time.sleep(1.0)
        after = rss_kib(proc.pid)
        per = (after - before) * 1024 / args.count
        print(f"kind={args.kind} connections={args.count} rss_before_kib={before} rss_after_kib={after} "
              f"bytes_per_connection={per:.0f}")
        for s in socks + warm:
            s.close()
    finally:
        proc.terminate()
        proc.wait(timeout=5)

if __name__ == "__main__":
    main()
