#!/usr/bin/env python3
"""Bytes of an idle SSE subscriber as an HTTP/2 stream, beyond its connection's.

Starts the release gateway, opens C idle HTTP/2 connections (prior knowledge, the
SETTINGS exchange done, no stream) and reads the gateway's VmRSS: the delta / C is a
connection's cost. Then opens S streams of /events/idle/<i % 100> on each connection
and waits for every response head (each stream is a registered subscriber): the new
delta / (C * S) is a stream's cost beyond its connection's.

  python3 bench/http2_idle.py --connections 20 --streams 100

Needs the h2 package (pip install h2). Only 127.0.0.1 is contacted; every wait is bounded.
"""
import argparse, resource, socket, subprocess, time

import h2.config, h2.connection, h2.events


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def start_gateway(binary, max_streams):
    proc = subprocess.Popen([binary, "--port", "0", "--heartbeat", "1h", "--loops", "1",
                             "--http2-max-concurrent-streams", str(max_streams)], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 10
    while time.time() < deadline:
        line = proc.stderr.readline()
        if "listening on" in line:
            return proc, int(line.split("listening on ")[1].split(",")[0].rsplit(":", 1)[1])
    proc.kill()
    raise RuntimeError("gateway did not start")


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.h2.initiate_connection()
        self.sock.sendall(self.h2.data_to_send())
        self.heads = set()
        self.settled = False
        self.read_until(lambda: self.settled)

    def read_until(self, done, seconds=10):
        deadline = time.time() + seconds
        while not done():
            if time.time() > deadline:
                raise RuntimeError("timed out")
            for event in self.h2.receive_data(self.sock.recv(65536)):
                if isinstance(event, h2.events.SettingsAcknowledged):
                    self.settled = True
                elif isinstance(event, h2.events.ResponseReceived):
                    self.heads.add(event.stream_id)
                elif isinstance(event, h2.events.DataReceived):
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            out = self.h2.data_to_send()
            if out:
                self.sock.sendall(out)

    def open_streams(self, count, offset):
        ids = []
        for i in range(count):
            stream = self.h2.get_next_available_stream_id()
            self.h2.send_headers(stream, [(":method", "GET"), (":path", f"/events/idle/{(offset + i) % 100}"),
                                          (":scheme", "http"), (":authority", "x")], end_stream=True)
            ids.append(stream)
        self.sock.sendall(self.h2.data_to_send())
        self.read_until(lambda: all(s in self.heads for s in ids))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=20)
    ap.add_argument("--streams", type=int, default=100)
    ap.add_argument("--binary", default=".build/release/sse-gateway")
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    proc, port = start_gateway(args.binary, max(128, args.streams))
    try:
        warm = Conn(port)
        warm.open_streams(50, 0)
        time.sleep(0.5)
        start = rss_kib(proc.pid)
        conns = [Conn(port) for _ in range(args.connections)]
        time.sleep(1.0)
        connected = rss_kib(proc.pid)
        for i, c in enumerate(conns):
            c.open_streams(args.streams, i)
        time.sleep(1.0)
        streaming = rss_kib(proc.pid)
        per_connection = (connected - start) * 1024 / args.connections
        per_stream = (streaming - connected) * 1024 / (args.connections * args.streams)
        print(f"connections={args.connections} streams_per_connection={args.streams} "
              f"rss_kib={start}/{connected}/{streaming} bytes_per_connection={per_connection:.0f} "
              f"bytes_per_stream_beyond_connection={per_stream:.0f}")
        for c in conns + [warm]:
            c.sock.close()
    finally:
        proc.terminate()
        proc.wait(timeout=5)


if __name__ == "__main__":
    main()
