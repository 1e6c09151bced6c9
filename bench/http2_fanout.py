#!/usr/bin/env python3
"""Fan-out over HTTP/2 against HTTP/1.1: 1 topic x 1,000 subscribers, and the highest
publish rate the gateway holds.

  HTTP/2:   10 `nghttp -n -m 100` clients: 10 connections of 100 streams each.
  HTTP/1.1: 1,000 keep-alive connections, one stream each, read by this script
            (recv and discard: no parsing, so the reader is not the bottleneck).
The publisher is the same for both: `h2load --rps R` (one HTTP/2 connection, up to 10
publishes in flight, 10-byte bodies) for 5 s per step, R = 100, 200, 300, 400, 500, 700, 1000. A rate is held when the
gateway delivered every frame owed (publishes x subscribers, `events_delivered_total`)
within 2 s of the step's end, cut no subscriber (`slow_subscriber_disconnects_total`),
and the publisher achieved at least 90 % of R (the gateway answered publishes in time).
Numbers come from the gateway's own /metrics, so both protocols are counted the same way.

  python3 bench/http2_fanout.py [--binary .build/release/sse-gateway]

Needs nghttp and h2load (Debian: nghttp2-client). Loopback only; every wait is bounded.
"""
import argparse, http.client, os, resource, selectors, socket, subprocess, tempfile, threading, time

SUBSCRIBERS = 1000
RATES = [100, 200, 300, 400, 500, 700, 1000]
STEP = 5


def metrics(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def start_gateway(binary):
    proc = subprocess.Popen([binary, "--port", "0", "--heartbeat", "1h", "--http2-max-concurrent-streams", "128"],
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 10
    while time.time() < deadline:
        line = proc.stderr.readline()
        if "listening on" in line:
            return proc, int(line.split("listening on ")[1].split(",")[0].rsplit(":", 1)[1])
    proc.kill()
    raise RuntimeError("gateway did not start")


def http1_subscribers(port, stop):
    socks = []
    sel = selectors.DefaultSelector()
    for _ in range(SUBSCRIBERS):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /events/fan HTTP/1.1\r\nHost: x\r\n\r\n")
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        socks.append(s)

    def read():
        while not stop.is_set():
            for key, _ in sel.select(0.2):
                try:
                    if not key.fileobj.recv(262144):
                        sel.unregister(key.fileobj)
                except BlockingIOError:
                    pass
        for s in socks:
            s.close()
    threading.Thread(target=read, daemon=True).start()


def wait_subscribers(port, count):
    deadline = time.time() + 30
    while time.time() < deadline:
        if metrics(port).get('sse_gateway_subscribers{channel="events"}') == count:
            return
        time.sleep(0.2)
    raise RuntimeError("subscribers did not all connect")


def run(binary, protocol, body):
    proc, port = start_gateway(binary)
    stop = threading.Event()
    clients = []
    try:
        if protocol == "http2":
            for _ in range(SUBSCRIBERS // 100):
                clients.append(subprocess.Popen(["nghttp", "-n", "-m", "100", f"http://127.0.0.1:{port}/events/fan"],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        else:
            http1_subscribers(port, stop)
        wait_subscribers(port, SUBSCRIBERS)
        held = 0
        for rate in RATES:
            before = metrics(port)
            subprocess.run(["h2load", "-c", "1", "-m", "10", "--rps", str(rate), "-D", str(STEP), "-d", body,
                            f"http://127.0.0.1:{port}/events/fan"], stdout=subprocess.DEVNULL, check=True)
            deadline = time.time() + 2
            while True:
                after = metrics(port)
                published = after['sse_gateway_publishes_total{channel="events"}'] - before['sse_gateway_publishes_total{channel="events"}']
                delivered = after['sse_gateway_events_delivered_total{channel="events"}'] - before['sse_gateway_events_delivered_total{channel="events"}']
                cut = after["sse_gateway_slow_subscriber_disconnects_total"] - before["sse_gateway_slow_subscriber_disconnects_total"]
                if delivered >= published * SUBSCRIBERS or time.time() > deadline:
                    break
                time.sleep(0.1)
            ok = delivered >= published * SUBSCRIBERS and cut == 0 and published >= 0.9 * rate * STEP
            print(f"{protocol}: rate={rate}/s achieved={published / STEP:.0f}/s delivered={delivered:.0f} "
                  f"owed={published * SUBSCRIBERS:.0f} cut={cut:.0f} {'held' if ok else 'NOT held'}", flush=True)
            if not ok:
                break
            held = rate
        return held
    finally:
        stop.set()
        for c in clients:
            c.terminate()
        for c in clients:
            c.wait(timeout=5)
        proc.terminate()
        proc.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=".build/release/sse-gateway")
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write("ten bytes!")
    try:
        results = {p: run(args.binary, p, f.name) for p in ("http1", "http2")}
    finally:
        os.unlink(f.name)
    print(f"highest rate held: HTTP/1.1 {results['http1']}/s, HTTP/2 {results['http2']}/s "
          f"(1 topic x {SUBSCRIBERS} subscribers)")


if __name__ == "__main__":
    main()
