"""The bench and its scenarios (a, b, c, d; Redis CPU per publish measured during each), for bench/cluster.py."""
import json, os, re, shlex, subprocess, tempfile, time

from comparison.common import LOAD, LOAD_CPU, ROOT, SERVER_CPU, cpu_busy_seconds, limit_fds, log
from comparison.figures import held

from clustering.processes import RedisSampler, redis_info
from clustering.systems import System


# --- the bench -------------------------------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.tmp = tempfile.mkdtemp(prefix="streams-cluster-")
        self.results = {}   # scenario -> system -> [run]
        self.commands = {}  # scenario -> [command lines]
        self.failures = []  # gateway (cluster or single) errors or loss
        self.serial = 0

    def workdir(self, kind):
        self.serial += 1
        return os.path.join(self.tmp, f"{self.serial:03d}-{kind}")

    def note(self, scenario, command, system):
        text = " ".join(shlex.quote(c) for c in command).replace(self.tmp, "$TMP").replace(ROOT + "/", "")
        text = re.sub(r"--topic-prefix \S+", "--topic-prefix $PREFIX", text)
        text = re.sub(r"\d{3}-(cluster|nchan|single|redis)/", r"NNN-\1/", text)
        if scenario == "a":
            text = re.sub(r"--rate \d+", "--rate $RATE", text)
        for i, node in enumerate(system.nodes):
            text = text.replace(str(node.port), f"$PORT{i + 1}")
        if system.redis_port:
            text = text.replace(str(system.redis_port), "$REDIS_PORT")
        listed = self.commands.setdefault(scenario, [])
        if text not in listed:
            listed.append(text)

    def sse_load(self, scenario, system, options, timeout, publish_to=None):
        """One sse-load run against `system`; publishers on the first node or spread over them
        (`publish_to`, else --publish-to)."""
        command = ["taskset", "-c", LOAD_CPU, LOAD]
        for url in system.urls:
            command += ["--url", url]
        command += ["--publish-to", publish_to or self.args.publish_to] + options + ["--json"]
        self.note(scenario, command, system)
        for c in system.commands:
            self.note(scenario, c, system)
        sampler = RedisSampler(system.redis_port) if system.redis_port else None
        idle = []
        if sampler:
            # A second of the cluster idle first (nodes connected, nobody subscribed or publishing):
            # Redis's own timers and the nodes' probes cost CPU whether anyone publishes or not.
            sampler.start()
            time.sleep(1.0)
            idle = sampler.samples[:]
        before_cpu, before_busy, wall = system.cpu(), cpu_busy_seconds(), time.monotonic()
        before_redis = redis_info(system.redis_port) if system.redis_port else None
        sampled_before = len(sampler.samples) if sampler else 0
        load_before = os.getloadavg()[0]
        launched = time.monotonic()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, preexec_fn=limit_fds)
        finally:
            if sampler:
                sampler.stop()
        wall = time.monotonic() - wall
        after_cpu, after_busy = system.cpu(), cpu_busy_seconds()
        lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
        if done.returncode != 0 or not lines:
            raise RuntimeError(f"sse-load exited {done.returncode}: {done.stderr.strip()[-300:]}")
        r = json.loads(lines[-1])
        cpu = {k: round(after_cpu[k] - before_cpu[k], 3) for k in after_cpu}
        r["cpu_s"] = cpu
        servers = sum(cpu.values())
        r["others_cpu0_pct"] = round(max(0.0, after_busy[SERVER_CPU] - before_busy[SERVER_CPU] - servers) / wall * 100)
        r["others_cpu1_pct"] = round(max(0.0, after_busy[LOAD_CPU] - before_busy[LOAD_CPU] - r["load_cpu_s"])
                                     / wall * 100)
        r["load_avg_1m"] = round(max(load_before, os.getloadavg()[0]), 2)
        if before_redis:
            cpu_after, commands_after = redis_info(system.redis_port)
            acked = max(1, r["publishes_acked"])
            r["redis_cpu_s"] = round(cpu_after - before_redis[0], 4)
            r["redis_cpu_us_per_publish"] = round((cpu_after - before_redis[0]) / acked * 1e6, 1)
            r["redis_commands_per_publish"] = round((commands_after - before_redis[1] - (len(sampler.samples) - sampled_before) - 1)
                                                    / acked, 2)
            # The publishing phase alone: it starts when the last subscriber connected (sse-load's
            # connect_s, from its start, ~ when it was launched) and lasts publish_s.
            start = launched + (r["connect_s"] or 0)
            a, b = sampler.at(start), sampler.at(start + r["publish_s"])
            idle_rate = None
            if len(idle) >= 2:
                idle_rate = (idle[-1][1] - idle[0][1]) / (idle[-1][0] - idle[0][0])
                r["redis_idle_cpu_ms_per_s"] = round(idle_rate * 1e3, 2)
            if a and b and r["publish_s"] > 0:
                r["redis_cpu_us_per_publish_publishing"] = round((b[0] - a[0]) / acked * 1e6, 1)
                if idle_rate is not None:
                    r["redis_cpu_us_per_publish_net"] = round(
                        max(0.0, b[0] - a[0] - idle_rate * r["publish_s"]) / acked * 1e6, 1)
                r["redis_commands_per_publish_publishing"] = round((b[1] - a[1] - (b[2] - a[2])) / acked, 2)
        return r

    def check(self, scenario, system, r, label):
        if system == "nchan":
            return
        problems = [f"{k}={r[k]}" for k in ("connections_failed", "publishes_failed", "duplicates", "out_of_order",
                                             "slow_subscriber_disconnects", "not_on_latest", "loss") if r.get(k)]
        if r.get("error"):
            problems.append(f"error={r['error']!r}")
        if problems:
            self.failures.append(f"scenario {scenario} ({label}): " + ", ".join(problems))

    def each(self, scenario, title, body):
        log(f"scenario {scenario}: {title} (load average {os.getloadavg()[0]:.2f})")
        store = self.results.setdefault(scenario, {s: [] for s in self.args.systems})
        for run in range(1, self.args.runs + 1):
            for system in self.args.systems:
                started = time.monotonic()
                try:
                    result = body(system, run)
                except Exception as error:  # noqa: BLE001 - recorded and reported
                    result = {"failed": f"{type(error).__name__}: {error}"}
                    if system != "nchan":
                        self.failures.append(f"scenario {scenario} ({system} run {run}): {error}")
                    log(f"  {system} run {run}: FAILED {error}")
                store[system].append(result)
                log(f"  {system} run {run}: {time.monotonic() - started:.0f} s")

    def scenario_a(self):
        if self.quick:
            subscribers, rates, step = 100, [25, 50], 1
        else:
            subscribers, rates, step = 1000, [25, 50, 75, 100, 150, 200, 300, 400, 600, 800], 5
            if self.args.issue24:  # the gateway in memory held 500-600/s in issue 24: room above it
                rates = rates + [1000]
        self.rates = rates

        def body(kind, run):
            out = {"steps": []}
            with System(kind, self.workdir(kind)) as system:
                for rate in rates:
                    r = self.sse_load("a", system, [
                        "--subscribers", str(subscribers), "--topics", "1", "--publishers", "4", "--rate", str(rate),
                        "--size", "128", "--duration", f"{step}s", "--ramp", "1s", "--settle", "2s",
                        "--connect-timeout", "30s", "--topic-prefix", f"cluster-a/{run}/{rate}"], timeout=step + 120)
                    r["held"] = held(r)
                    self.check("a", kind, r, f"{kind} run {run}, {rate}/s")
                    out["steps"].append(r)
                    log(f"    {kind} {rate}/s: p99 {r['latency_p99_ms']} ms, loss {r['loss']}, "
                        f"achieved {r['publish_rate_achieved']}/s, held {r['held']}")
                    if not r["held"] and not self.quick:
                        break  # the highest rate held is the last step before the first one not held
            return out
        self.each("a", f"one topic x {subscribers} subscribers split over the nodes, stepped rates", body)

    def scenario_b(self):
        n, duration = (200, 2) if self.quick else (10_000, 10)

        def body(kind, run):
            with System(kind, self.workdir(kind)) as system:
                r = self.sse_load("b", system, [
                    "--subscribers", str(n), "--topics", "1", "--publishers", "4", "--rate", "20", "--size", "128",
                    "--duration", f"{duration}s", "--ramp", "2s", "--settle", "5s", "--connect-timeout", "30s",
                    "--topic-prefix", f"cluster-b/{run}"], timeout=duration + 180)
                self.check("b", kind, r, f"{kind} run {run}")
                log(f"    {kind}: p99 {r['latency_p99_ms']} ms, loss {r['loss']}, achieved {r['publish_rate_achieved']}/s")
                return r
        self.each("b", f"{n} subscribers split over the nodes, 20 publishes/s", body)

    def scenario_c(self):
        """Many topics: 2,000 topics x 2 subscribers (each topic's two on different nodes of a cluster),
        16 publishers round-robin over the topics and over the nodes, unpaced: deliveries/s."""
        topics, duration = (50, 2) if self.quick else (2000, 10)

        def body(kind, run):
            with System(kind, self.workdir(kind)) as system:
                r = self.sse_load("c", system, [
                    "--subscribers", str(2 * topics), "--topics", str(topics), "--publishers", "16", "--rate", "0",
                    "--size", "128", "--duration", f"{duration}s", "--ramp", "1s", "--settle", "2s",
                    "--connect-timeout", "30s", "--topic-prefix", f"cluster-c/{run}"],
                    timeout=duration + 120, publish_to="all")
                self.check("c", kind, r, f"{kind} run {run}")
                log(f"    {kind}: {r['deliveries_per_s']} deliveries/s, loss {r['loss']}")
                return r
        self.each("c", f"many topics, {topics} topics x 2 subscribers, publishers on every node, unpaced", body)

    def scenario_d(self):
        """Publish only: 16 keep-alive publishers spread over the nodes, 100 topics, no subscribers: requests/s."""
        duration = 2 if self.quick else 10

        def body(kind, run):
            with System(kind, self.workdir(kind)) as system:
                r = self.sse_load("d", system, [
                    "--subscribers", "0", "--topics", "100", "--publishers", "16", "--rate", "0", "--size", "128",
                    "--duration", f"{duration}s", "--topic-prefix", f"cluster-d/{run}"],
                    timeout=duration + 60, publish_to="all")
                self.check("d", kind, r, f"{kind} run {run}")
                log(f"    {kind}: {r['publish_rate_achieved']} publishes/s, ack p99 {r['publish_ack_p99_ms']} ms")
                return r
        self.each("d", "publish only, 16 publishers over the nodes, no subscribers", body)

    # --- figures --------------------------------------------------------------------------

    def highest(self, run):
        best = None
        for step in run.get("steps", []):
            if not step["held"]:
                break
            best = step
        return best

    def runs(self, scenario, kind):
        return [r for r in self.results.get(scenario, {}).get(kind, []) if "failed" not in r]
