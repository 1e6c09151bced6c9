#!/usr/bin/env python3
"""Publishes per second a whole gateway cluster holds: two gateways on one Redis against two
gateways on a 3-master Redis Cluster (issue 22's "Measured"), with Redis CPU per publish per
shard. Optionally two nginx + Nchan on the same Redis Cluster.

Every system is started fresh for every run, in a temporary directory, on free ports:
  single   one redis-server (--save "" --appendonly no), two `sse-gateway --redis redis://…`
  cluster  three cluster-enabled redis-servers joined by `redis-cli --cluster create
           --cluster-replicas 0 --cluster-yes` (cluster-node-timeout 1000,
           cluster-require-full-coverage no, as Tests/TestSupport/RedisCluster.swift makes
           them), two `sse-gateway --redis redis+cluster://p1,p2,p3`
  nchan    the same 3-master cluster, two nginx + Nchan (one worker each) whose upstream names
           the three nodes (`nchan_redis_server`; Nchan discovers the cluster)
Servers and redis-servers on CPU 0 (taskset), the load (sse-load) on CPU 1, as bench/cluster.py;
with --no-pin all of them free on every core.

The load, per step (one sse-load run per step, the system kept between steps):
  --topics T --subscribers T (one subscriber per topic: topic t's on gateway t % 2),
  --publishers P --publish-to all (publishers alternate between the gateways, so half the
  publishes reach their subscriber through Redis's pub/sub), 128-byte payloads, 5 s.
T topics spread over the shards by hash slot. Rates step up until one is not held
(held: loss 0, nobody cut, p99 < 100 ms, >= 95 % of the rate achieved; comparison/figures.held).

Redis CPU: utime + stime of each redis-server from /proc/<pid>/stat, and `INFO commandstats`'
evalsha calls of each node, sampled every 100 ms; over the publishing phase of each step
(from sse-load's connect_s after its launch, for publish_s), per shard:
  CPU / EVALSHA calls that shard ran (the publish script; the gateway runs no other script in
  steady state) and, for the whole Redis side, CPU / publishes acked.
The gateways' CPU (utime + stime) per publish acked over the same phase is reported too.

  python3 bench/redis-cluster/throughput.py [--order single,cluster,single,cluster]
      [--rates 1000,2000,...] [--topics 1000] [--publishers 32] [--step 5] [--out FILE.json]

Needs .build/release/sse-gateway and sse-load (swift build -c release --product sse-gateway
--product sse-load), Debian's redis-server and redis-tools, and for `nchan` nginx-light and
libnginx-mod-nchan. Loopback only; every process started is stopped by pid.
"""
import argparse, json, os, signal, subprocess, sys, tempfile, threading, time, shutil
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from comparison.common import (GATEWAY, LOAD, ROOT, TEMPLATE, children, free_port, limit_fds,  # noqa: E402
                               log, proc_cpu_seconds, wait_for_port)
from comparison.figures import held  # noqa: E402
from clustering.processes import redis_command  # noqa: E402

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
SERVER_CPU, LOAD_CPU = "0", "1"
PIN = True  # --no-pin: every process free on every core


def pinned(cpu):
    return ["taskset", "-c", cpu] if PIN else []


class Proc:
    def __init__(self, name, command, workdir, port):
        self.name, self.command, self.workdir, self.port = name, command, workdir, port
        os.makedirs(workdir, exist_ok=True)
        self.proc = subprocess.Popen(command, cwd=workdir, stdout=open(os.path.join(workdir, "out.log"), "w"),
                                     stderr=subprocess.STDOUT, preexec_fn=limit_fds)
        self.pid = self.proc.pid  # for nginx: its worker, set by the system
        if not wait_for_port(port, self.proc):
            self.stop()
            raise RuntimeError(f"{name} did not start: {self.tail()}")

    def tail(self):
        try:
            with open(os.path.join(self.workdir, "out.log")) as f:
                return f.read()[-800:]
        except OSError:
            return ""

    def cpu(self):
        try:
            return proc_cpu_seconds(self.pid)
        except OSError:
            return 0.0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self.pid != self.proc.pid:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and os.path.exists(f"/proc/{self.pid}"):
                time.sleep(0.05)


def commandstats(port):
    """evalsha (calls, usec) so far on a node (0, 0 before the first)."""
    for line in redis_command(port, "INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_evalsha:"):
            fields = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
            return int(fields["calls"]), int(fields["usec"])
    return 0, 0


def http_ok(url, data=None):
    try:
        request = urllib.request.Request(url, data=data, method="POST" if data else "GET",
                                         headers={"Content-Type": "text/plain", "Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=2) as response:
            return 200 <= response.status < 300
    except OSError:
        return False


class System:
    def __init__(self, kind, workdir, args):
        self.kind, self.workdir, self.args = kind, workdir, args
        self.redis, self.nodes, self.commands = [], [], []

    def start(self):
        cluster = self.kind in ("cluster", "nchan")
        for i in range(3 if cluster else 1):
            port = free_port()
            d = os.path.join(self.workdir, f"redis{i + 1}")
            command = pinned(SERVER_CPU) + [REDIS, "--port", str(port), "--bind", "127.0.0.1", "--dir", d,
                       "--save", "", "--appendonly", "no", "--daemonize", "no", "--maxclients", "10000"]
            if cluster:
                command += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                            "--cluster-node-timeout", "1000", "--cluster-port", str(free_port()),
                            "--cluster-require-full-coverage", "no"]
            self.redis.append(Proc(f"redis{i + 1}", command, d, port))
            self.commands.append(command)
        ports = [r.port for r in self.redis]
        if cluster:
            create = [CLI, "--cluster", "create"] + [f"127.0.0.1:{p}" for p in ports] + [
                "--cluster-replicas", "0", "--cluster-yes"]
            done = subprocess.run(create, capture_output=True, text=True, timeout=60)
            if done.returncode != 0:
                raise RuntimeError(f"redis-cli --cluster create: {done.stdout[-500:]} {done.stderr[-500:]}")
            self.commands.append(create)
            deadline = time.monotonic() + 30
            while not all("cluster_state:ok" in redis_command(p, "CLUSTER", "INFO") for p in ports):
                if time.monotonic() > deadline:
                    raise RuntimeError("cluster_state never ok")
                time.sleep(0.1)
            url = "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in ports)
        else:
            url = f"redis://127.0.0.1:{ports[0]}"
        for i in range(2):
            port = free_port()
            d = os.path.join(self.workdir, f"node{i + 1}")
            if self.kind == "nchan":
                os.makedirs(d, exist_ok=True)
                with open(TEMPLATE) as f:
                    conf = f.read().replace("@DIR@", d).replace("@PORT@", str(port)).replace("@WORKERS@", "1")
                servers = "".join(f"    nchan_redis_server redis://127.0.0.1:{p};\n" for p in ports)
                conf = conf.replace("  server {\n", f"  upstream streams_redis {{\n{servers}  }}\n  server {{\n", 1)
                conf = conf.replace("      nchan_pubsub;\n", "      nchan_pubsub;\n      nchan_redis_pass streams_redis;\n")
                path = os.path.join(d, "nginx.conf")
                with open(path, "w") as f:
                    f.write(conf)
                command = pinned(SERVER_CPU) + ["nginx", "-c", path, "-p", d + "/", "-e",
                           os.path.join(d, "error.log")]
            else:
                command = pinned(SERVER_CPU) + [self.args.binary, "--host", "127.0.0.1", "--port", str(port),
                           "--public", os.path.join(ROOT, "public"), "--redis", url]
            node = Proc(f"{self.kind} node {i + 1}", command, d, port)
            self.nodes.append(node)
            self.commands.append(command)
            if self.kind == "nchan":
                deadline = time.monotonic() + 5
                workers = children(node.proc.pid)
                while len(workers) != 1 and time.monotonic() < deadline:
                    time.sleep(0.05)
                    workers = children(node.proc.pid)
                node.pid = workers[0]
        for node in self.nodes:
            deadline = time.monotonic() + 30
            while not (self.kind == "nchan" or http_ok(f"http://127.0.0.1:{node.port}/readyz")) or \
                    not http_ok(f"http://127.0.0.1:{node.port}/events/bench-ready/0", b"ready"):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{node.name} never ready: {node.tail()}")
                time.sleep(0.2)
        time.sleep(0.5)

    def stop(self):
        for p in self.nodes + self.redis:
            p.stop()

    def sample(self):
        return {"t": time.monotonic(),
                "redis_cpu": [r.cpu() for r in self.redis],
                "evalsha": [commandstats(r.port) for r in self.redis],
                "nodes_cpu": [n.cpu() for n in self.nodes]}


class Sampler(threading.Thread):
    def __init__(self, system):
        super().__init__(daemon=True)
        self.system, self.samples, self.halt = system, [], threading.Event()

    def run(self):
        while not self.halt.is_set():
            try:
                self.samples.append(self.system.sample())
            except OSError:
                pass
            self.halt.wait(0.1)

    def stop(self):
        self.halt.set()
        self.join(timeout=5)

    def at(self, when):
        """The sample nearest after `when` (100 ms resolution; /proc's CPU is in 10 ms ticks anyway)."""
        for s in self.samples:
            if s["t"] >= when:
                return s
        return self.samples[-1]


def delta(a, b):
    return {"redis_cpu": [y - x for x, y in zip(a["redis_cpu"], b["redis_cpu"])],
            "evalsha": [y[0] - x[0] for x, y in zip(a["evalsha"], b["evalsha"])],
            "script_usec": [y[1] - x[1] for x, y in zip(a["evalsha"], b["evalsha"])],
            "nodes_cpu": [y - x for x, y in zip(a["nodes_cpu"], b["nodes_cpu"])], "s": b["t"] - a["t"]}


def step(system, args, run, rate):
    urls = [f"http://127.0.0.1:{n.port}" for n in system.nodes]
    command = pinned(LOAD_CPU) + [LOAD]
    for u in urls:
        command += ["--url", u]
    command += ["--publish-to", "all", "--subscribers", str(args.topics), "--topics", str(args.topics),
                "--publishers", str(args.publishers), "--rate", str(rate), "--size", "128",
                "--duration", f"{args.step}s", "--ramp", "1s", "--settle", "2s", "--connect-timeout", "30s",
                "--topic-prefix", f"rc-{system.kind}-{run}-{rate}", "--json"]
    sampler = Sampler(system)
    sampler.start()
    time.sleep(0.3)
    load0 = os.getloadavg()[0]
    launched = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.step + 120, preexec_fn=limit_fds)
    finally:
        sampler.stop()
    lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"sse-load exited {done.returncode}: {done.stderr[-300:]}")
    r = json.loads(lines[-1])
    r["held"] = held(r)
    r["load_avg_1m"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
    start = launched + (r.get("connect_s") or 0)
    d = delta(sampler.at(start), sampler.at(start + (r.get("publish_s") or args.step)))
    acked = max(1, r["publishes_acked"])
    r["window_s"] = round(d["s"], 2)
    r["redis_cpu_s"] = [round(x, 3) for x in d["redis_cpu"]]
    r["redis_evalsha"] = d["evalsha"]
    r["redis_cpu_us_per_publish_per_shard"] = [round(c / e * 1e6, 1) if e else None
                                               for c, e in zip(d["redis_cpu"], d["evalsha"])]
    r["redis_script_us_per_call_per_shard"] = [round(u / e, 1) if e else None
                                               for u, e in zip(d["script_usec"], d["evalsha"])]
    r["redis_cpu_us_per_publish_all"] = round(sum(d["redis_cpu"]) / acked * 1e6, 1)
    r["nodes_cpu_s"] = [round(x, 3) for x in d["nodes_cpu"]]
    r["nodes_cpu_us_per_publish"] = round(sum(d["nodes_cpu"]) / acked * 1e6, 1)
    # the publishes acked within the window, estimated from the rate achieved
    r["publishes_in_window"] = round(r["publish_rate_achieved"] * d["s"])
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--order", default="single,cluster,single,cluster", help="systems in run order")
    ap.add_argument("--rates", default="1000,2000,3000,4000,5000,6000,8000,10000,12000,15000")
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--publishers", type=int, default=32)
    ap.add_argument("--step", type=int, default=5)
    ap.add_argument("--binary", default=GATEWAY)
    ap.add_argument("--no-pin", action="store_true", help="no taskset: servers, Redis and the load share both cores")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "redis-cluster-throughput.json"))
    args = ap.parse_args()
    rates = [int(x) for x in args.rates.split(",")]
    global PIN
    PIN = not args.no_pin
    tmp = tempfile.mkdtemp(prefix="rc-throughput-")
    results = []
    counts = {}
    try:
        for kind in args.order.split(","):
            counts[kind] = counts.get(kind, 0) + 1
            run = counts[kind]
            system = System(kind, os.path.join(tmp, f"{kind}{run}"), args)
            log(f"{kind} run {run}: starting (load {os.getloadavg()[0]:.2f})")
            entry = {"system": kind, "run": run, "steps": [], "commands": None}
            try:
                system.start()
                entry["commands"] = [" ".join(c) for c in system.commands]
                for rate in rates:
                    r = step(system, args, run, rate)
                    entry["steps"].append(r)
                    log(f"  {kind} {rate}/s: achieved {r['publish_rate_achieved']}/s p99 {r['latency_p99_ms']} ms "
                        f"loss {r['loss']} failed {r['publishes_failed']} held {r['held']} | redis µs/publish per "
                        f"shard {r['redis_cpu_us_per_publish_per_shard']} (evalsha {r['redis_evalsha']}), all "
                        f"{r['redis_cpu_us_per_publish_all']} | gateways µs/publish {r['nodes_cpu_us_per_publish']} "
                        f"| load {r['load_avg_1m']}")
                    if not r["held"]:
                        break
            except Exception as error:  # noqa: BLE001 - recorded
                entry["failed"] = f"{type(error).__name__}: {error}"
                log(f"  {kind} run {run}: FAILED {error}")
            finally:
                system.stop()
            best = None
            for r in entry["steps"]:
                if not r["held"]:
                    break
                best = r["rate"]
            entry["highest_held"] = best
            log(f"{kind} run {run}: highest rate held {best}")
            results.append(entry)
            with open(args.out, "w") as f:
                json.dump(results, f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for e in results:
        print(f"{e['system']} run {e['run']}: highest held {e['highest_held']}/s {e.get('failed', '')}")


if __name__ == "__main__":
    main()
