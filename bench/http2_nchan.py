#!/usr/bin/env python3
"""Fan-out over HTTP/2: the gateway against nginx + Nchan (nginx's `listen ... http2`,
cleartext prior knowledge), 1 topic x 1,000 subscribers on 10 connections of 100
streams, and the highest publish rate each holds (issue 25's "fan-out over HTTP/2
>= Nchan's over HTTP/2").

Both servers are run and read the same way, so the numbers compare:
  subscribers: 10 `nghttp -m 100 -H 'accept: text/event-stream'` clients on
               /events/fan; this script reads their output and counts the frames
               (occurrences of the 10-byte body), client-side for both servers;
  publisher:   `h2load --rps R` (one HTTP/2 connection, up to 10 publishes in flight,
               10-byte bodies) for 5 s per step, R = 100, 200, 300, 400, 500, 700,
               1000, 1500, 2000.
A rate is held when every frame owed (publishes answered 2xx x 1,000) reached the
subscribers within 2 s of the step's end and the publisher achieved >= 90 % of R.
Servers: `sse-gateway --loops N` and nginx with `worker_processes N` (default 1), the
Nchan configuration of bench/nchan.conf.template (the one bench/compare.sh uses for
HTTP/1.1) with `http2` on its listen line.

  python3 bench/http2_nchan.py [--binary .build/release/sse-gateway] [--workers 1]
                               [--only gateway|nchan]

Needs nghttp and h2load (nghttp2-client), nginx and libnginx-mod-nchan (bench/compare.sh
installs them). Timed figures: run it on a quiet machine. Loopback only; every wait bounded.
"""
import argparse, os, resource, shutil, socket, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUBSCRIBERS = 1000
PER_CONNECTION = 100
RATES = [100, 200, 300, 400, 500, 700, 1000, 1500, 2000]
STEP = 5
BODY = b"ten bytes!"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, within=10):
    deadline = time.time() + within
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def start_gateway(binary, workers, workdir):
    port = free_port()
    proc = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), "--loops", str(workers),
                             "--heartbeat", "1h", "--http2-max-concurrent-streams", "128"],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, "gateway.log"), "w"))
    return proc, port


def start_nchan(workers, workdir):
    port = free_port()
    with open(os.path.join(ROOT, "bench", "nchan.conf.template")) as f:
        conf = f.read().replace("@DIR@", workdir).replace("@PORT@", str(port)).replace("@WORKERS@", str(workers))
    listen = f"listen 127.0.0.1:{port} backlog=4096;"
    assert listen in conf, "bench/nchan.conf.template's listen line changed"
    # nginx 1.22 (Debian 12): `http2` on the listen line; cleartext, so prior knowledge.
    conf = conf.replace(listen, f"listen 127.0.0.1:{port} backlog=4096 http2;\n    http2_max_concurrent_streams 128;")
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        os.makedirs(os.path.join(workdir, sub), exist_ok=True)
    path = os.path.join(workdir, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    proc = subprocess.Popen(["nginx", "-c", path, "-p", workdir + "/", "-e", os.path.join(workdir, "error.log")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, port


class Subscribers:
    """10 nghttp clients of 100 streams each; `frames` counts the bodies they printed."""

    def __init__(self, port):
        self.frames = 0
        self.lock = threading.Lock()
        self.procs = []
        for _ in range(SUBSCRIBERS // PER_CONNECTION):
            # nghttp writes the bodies with stdio, block-buffered into a pipe: without
            # `stdbuf -o0` up to a buffer's worth of frames (~150 events) per client stays in
            # nghttp until more arrives, counted a step late (a step came out short, the next over).
            proc = subprocess.Popen(["stdbuf", "-o0", "nghttp", "-m", str(PER_CONNECTION), "-H", "accept: text/event-stream",
                                     f"http://127.0.0.1:{port}/events/fan"],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            self.procs.append(proc)
            threading.Thread(target=self.count, args=(proc,), daemon=True).start()

    def count(self, proc):
        carry = b""
        while True:
            chunk = proc.stdout.read1(262144)
            if not chunk:
                return
            data = carry + chunk
            found = data.count(BODY)
            # A body cut between two reads is counted in the next: keep its start.
            carry = data[-(len(BODY) - 1):] if not data.endswith(BODY) else b""
            with self.lock:
                self.frames += found

    def settle(self, within=5):
        """Waits (at most `within` s) until nothing more arrives for 0.3 s: the last step's
        frames are not counted in the next."""
        deadline = time.time() + within
        last = self.total()
        while time.time() < deadline:
            time.sleep(0.3)
            now = self.total()
            if now == last:
                return
            last = now

    def total(self):
        with self.lock:
            return self.frames

    def stop(self):
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()


def publish(port, body_file, rate, seconds):
    """h2load's publishes at `rate` for `seconds`; the number answered 2xx."""
    run = subprocess.run(["h2load", "-c", "1", "-m", "10", "--rps", str(rate), "-D", str(seconds), "-d", body_file,
                          f"http://127.0.0.1:{port}/events/fan"], capture_output=True, text=True, timeout=seconds + 30)
    for line in run.stdout.splitlines():
        if line.startswith("status codes:"):
            return int(line.split()[2])  # "status codes: N 2xx, ..."
    raise RuntimeError(f"h2load: {run.stdout[-500:]} {run.stderr[-500:]}")


def wait_all_subscribed(port, body_file, subscribers):
    """Publishes one value every second until it reaches all 1,000 (the streams are open)."""
    deadline = time.time() + 60
    while time.time() < deadline:
        before = subscribers.total()
        publish(port, body_file, 1, 1)
        time.sleep(1)
        if subscribers.total() - before >= SUBSCRIBERS:
            return
    raise RuntimeError(f"not all {SUBSCRIBERS} subscribers receive")


def run(server, args, body_file):
    workdir = tempfile.mkdtemp(prefix=f"http2-{server}-")
    proc, port = (start_gateway(args.binary, args.workers, workdir) if server == "gateway"
                  else start_nchan(args.workers, workdir))
    subscribers = None
    try:
        if not wait_for_port(port, proc):
            raise RuntimeError(f"{server} did not start (see {workdir})")
        subscribers = Subscribers(port)
        wait_all_subscribed(port, body_file, subscribers)
        held = 0
        for rate in RATES:
            subscribers.settle()
            before = subscribers.total()
            published = publish(port, body_file, rate, STEP)
            deadline = time.time() + 2
            while subscribers.total() - before < published * SUBSCRIBERS and time.time() < deadline:
                time.sleep(0.1)
            delivered = subscribers.total() - before
            ok = delivered >= published * SUBSCRIBERS and published >= 0.9 * rate * STEP
            print(f"{server}: rate={rate}/s achieved={published / STEP:.0f}/s delivered={delivered} "
                  f"owed={published * SUBSCRIBERS} {'held' if ok else 'NOT held'}", flush=True)
            if not ok:
                break
            held = rate
        return held
    finally:
        if subscribers:
            subscribers.stop()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build/release/sse-gateway"))
    ap.add_argument("--workers", type=int, default=1, help="gateway --loops and nginx worker_processes")
    ap.add_argument("--only", choices=["gateway", "nchan"])
    args = ap.parse_args()
    for tool in ("nghttp", "h2load", "stdbuf") + (() if args.only == "gateway" else ("nginx",)):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found (apt-get install nghttp2-client nginx-light libnginx-mod-nchan)")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(BODY)
    try:
        servers = [args.only] if args.only else ["gateway", "nchan"]
        results = {s: run(s, args, f.name) for s in servers}
    finally:
        os.unlink(f.name)
    print("highest rate held over HTTP/2 (1 topic x 1,000 subscribers, 10 connections x 100 streams): "
          + ", ".join(f"{s} {r}/s" for s, r in results.items()))


if __name__ == "__main__":
    main()
