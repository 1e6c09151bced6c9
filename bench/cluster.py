#!/usr/bin/env python3
"""The gateway cluster side by side with an Nchan cluster on the same Redis (issue 12).
Run through bench/cluster.sh, which installs what is missing and builds first; see bench/cluster.md.

Three systems, each started fresh for every run of every scenario:
  cluster  two sse-gateway processes with --redis on one redis-server
  nchan    two nginx + Nchan instances (one worker each) with nchan_redis_pass on one redis-server
  single   one sse-gateway without Redis (the baseline for "added latency")
Every server and redis-server on CPU 0, the load (one sse-load, --url once per node) on CPU 1.
redis-server runs in a temp dir on a free port with --save "" --appendonly no: nothing is
written to disk during the bench (a production Redis would persist; that costs Redis CPU
which this bench does not count).

Scenarios:
  a  one topic x 1,000 subscribers split over the nodes, 4 publishers on the first node,
     stepped publish rate (5 s a step) until a step is not held (loss 0, p99 < 100 ms,
     >= 95 % of the rate, nobody cut): the highest rate held
  b  10,000 subscribers on one topic split over the nodes, 20 publishes/s for 10 s:
     achieved rate, loss, p99; p99 added over the single node
  c  Redis CPU per publish: (used_cpu_sys + used_cpu_user) delta of INFO cpu over each
     sse-load run / publishes acked; measured during a and b. Also, from INFO sampled every
     100 ms: the publishing phase alone (the run also holds the subscribers' connects), and
     that less Redis's idle CPU (measured for 1 s before each run, nodes connected)
"""
import argparse, datetime, json, os, platform, re, shlex, shutil, signal, socket, subprocess, sys, tempfile, threading, time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comparison.common import (GATEWAY, LOAD, LOAD_CPU, ROOT, SERVER_CPU, TEMPLATE, children,  # noqa: E402
                               cpu_busy_seconds, first_line, free_port, limit_fds, log, pid_alive,
                               proc_cpu_seconds, wait_for_port, wait_for_quiet)
from comparison.figures import fmt, held, mean  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
REDIS = "/usr/bin/redis-server"
SYSTEMS = ("cluster", "nchan", "single")
LABEL = {"cluster": "gateway cluster", "nchan": "Nchan cluster", "single": "single gateway"}
NODES = {"cluster": 2, "nchan": 2, "single": 1}


# --- processes -----------------------------------------------------------------------------

class Process:
    """One server process pinned to CPU 0, stopped by pid (SIGTERM, SIGKILL after 10 s)."""

    def __init__(self, name, command, workdir, port):
        self.name, self.command, self.workdir, self.port = name, command, workdir, port
        self.proc = None
        self.pid = None  # the process measured (for nginx, its worker)

    def start(self):
        os.makedirs(self.workdir, exist_ok=True)
        out = open(os.path.join(self.workdir, "server.out"), "w")
        self.proc = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT, preexec_fn=limit_fds,
                                     cwd=self.workdir)
        self.pid = self.proc.pid
        if not wait_for_port(self.port, self.proc):
            self.stop()
            raise RuntimeError(f"{self.name} did not start: {self.tail()}")
        return self

    def tail(self):
        text = ""
        for name in ("server.out", "error.log"):
            try:
                with open(os.path.join(self.workdir, name)) as f:
                    text += f.read()[-600:]
            except OSError:
                pass
        return text.strip()

    def cpu(self):
        try:
            return proc_cpu_seconds(self.pid)
        except OSError:
            return 0.0

    def stop(self):
        if self.proc is None:
            return
        worker = self.pid if self.pid != self.proc.pid else None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if worker:
            deadline = time.monotonic() + 5
            while pid_alive(worker) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_alive(worker):
                os.kill(worker, signal.SIGKILL)
        self.proc = None


def redis_command(port, *words, timeout=5):
    """One command over RESP; returns the reply's text (bulk string or status line)."""
    request = f"*{len(words)}\r\n" + "".join(f"${len(w.encode())}\r\n{w}\r\n" for w in words)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request.encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if data.startswith(b"$"):
                header, _, rest = data.partition(b"\r\n")
                if len(rest) >= int(header[1:]) + 2:
                    return rest[:int(header[1:])].decode()
            elif data.endswith(b"\r\n"):
                return data.decode().strip()
    return data.decode()


def redis_info(port):
    """INFO cpu stats (one command): Redis CPU seconds (sys + user) and commands processed so far."""
    fields = {}
    for line in redis_command(port, "INFO", "cpu", "stats").splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            fields[key] = value.strip()
    return float(fields["used_cpu_sys"]) + float(fields["used_cpu_user"]), int(fields["total_commands_processed"])


class RedisSampler(threading.Thread):
    """INFO every 100 ms during a load run, so the publishing phase alone can be priced
    (the whole run also holds the subscribers' connects, which cost Redis work too)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.samples, self.halt = port, [], threading.Event()

    def run(self):
        while not self.halt.is_set():
            try:
                cpu, commands = redis_info(self.port)
                self.samples.append((time.monotonic(), cpu, commands))
            except OSError:
                pass
            self.halt.wait(0.1)

    def stop(self):
        self.halt.set()
        self.join(timeout=5)

    def at(self, when):
        """(cpu, commands, samples so far) interpolated at monotonic time `when`."""
        s = self.samples
        if not s:
            return None
        if when <= s[0][0]:
            return s[0][1], s[0][2], 0
        for i in range(1, len(s)):
            if s[i][0] >= when:
                (t0, c0, n0), (t1, c1, n1) = s[i - 1], s[i]
                f = (when - t0) / (t1 - t0) if t1 > t0 else 0
                return c0 + f * (c1 - c0), n0 + f * (n1 - n0), i
        return s[-1][1], s[-1][2], len(s)


def http_post_ok(port, path):
    try:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=b"ready", method="POST",
                                         headers={"Content-Type": "text/plain", "Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=2) as response:
            return 200 <= response.status < 300
    except OSError:
        return False


class System:
    """A system under test: its redis-server (if any) and its nodes, all on CPU 0."""

    def __init__(self, kind, workdir):
        self.kind, self.workdir = kind, workdir
        self.redis = None
        self.redis_port = None
        self.nodes = []
        self.commands = []

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        if self.kind != "single":
            self.redis_port = free_port()
            d = os.path.join(self.workdir, "redis")
            command = ["taskset", "-c", SERVER_CPU, REDIS, "--port", str(self.redis_port), "--bind", "127.0.0.1",
                       "--dir", d, "--save", "", "--appendonly", "no", "--daemonize", "no", "--maxclients", "10000"]
            self.redis = Process("redis-server", command, d, self.redis_port).start()
            self.commands.append(command)
        for index in range(NODES[self.kind]):
            d = os.path.join(self.workdir, f"node{index + 1}")
            port = free_port()
            if self.kind == "nchan":
                os.makedirs(d, exist_ok=True)
                path = os.path.join(d, "nginx.conf")
                with open(path, "w") as f:
                    f.write(nchan_conf(d, port, self.redis_port))
                command = ["taskset", "-c", SERVER_CPU, "nginx", "-c", path, "-p", d + "/", "-e",
                           os.path.join(d, "error.log")]
            else:
                command = ["taskset", "-c", SERVER_CPU, GATEWAY, "--host", "127.0.0.1", "--port", str(port),
                           "--public", os.path.join(ROOT, "public")]
                if self.redis_port:
                    command += ["--redis", f"redis://127.0.0.1:{self.redis_port}"]
            node = Process(f"{self.kind} node {index + 1}", command, d, port).start()
            self.nodes.append(node)
            self.commands.append(command)
            if self.kind == "nchan":
                deadline = time.monotonic() + 5
                workers = children(node.proc.pid)
                while not workers and time.monotonic() < deadline:
                    time.sleep(0.05)
                    workers = children(node.proc.pid)
                if len(workers) != 1:
                    raise RuntimeError(f"expected one nginx worker, found {workers}")
                node.pid = workers[0]
        # Ready: a publish is acked on every node (so Redis is connected and its scripts loaded).
        for node in self.nodes:
            deadline = time.monotonic() + 15
            while not http_post_ok(node.port, "/events/bench-ready/0"):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{node.name} never acked a publish: {node.tail()}")
                time.sleep(0.1)
        time.sleep(0.3)

    def stop(self):
        for node in self.nodes:
            node.stop()
        if self.redis:
            self.redis.stop()

    @property
    def urls(self):
        return [f"http://127.0.0.1:{n.port}" for n in self.nodes]

    def cpu(self):
        """CPU seconds so far of each node and of redis-server."""
        out = {f"node{i + 1}": n.cpu() for i, n in enumerate(self.nodes)}
        if self.redis:
            out["redis"] = self.redis.cpu()
        return out


def nchan_conf(workdir, port, redis_port):
    """bench/nchan.conf.template (the single-node Nchan of compare.sh) plus Redis: an upstream
    with `nchan_redis_server` and `nchan_redis_pass` in each location (Nchan 1.3's spelling;
    `nchan_redis_url` + `nchan_use_redis on` is the older one, still accepted). Storage mode is
    Nchan's default, `distributed`: messages and channel state live in Redis, like the gateway's."""
    with open(TEMPLATE) as f:
        conf = f.read().replace("@DIR@", workdir).replace("@PORT@", str(port)).replace("@WORKERS@", "1")
    # In every location: set at the server level, nchan_redis_pass was not inherited by
    # these regex locations (Nchan 1.3.6 kept the channels in its own memory).
    server, pubsub = "  server {\n", "      nchan_pubsub;\n"
    if server not in conf or conf.count(pubsub) != 2:
        raise RuntimeError("bench/nchan.conf.template changed shape: cannot add the Redis lines")
    conf = conf.replace(server, f"  upstream streams_redis {{\n    nchan_redis_server redis://127.0.0.1:{redis_port};\n"
                                f"  }}\n{server}", 1)
    return conf.replace(pubsub, pubsub + "      nchan_redis_pass streams_redis;\n")


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
        text = re.sub(r"\d{3}-(cluster|nchan|single)/", r"NNN-\1/", text)
        if scenario == "a":
            text = re.sub(r"--rate \d+", "--rate $RATE", text)
        for i, node in enumerate(system.nodes):
            text = text.replace(str(node.port), f"$PORT{i + 1}")
        if system.redis_port:
            text = text.replace(str(system.redis_port), "$REDIS_PORT")
        listed = self.commands.setdefault(scenario, [])
        if text not in listed:
            listed.append(text)

    def sse_load(self, scenario, system, options, timeout):
        command = ["taskset", "-c", LOAD_CPU, LOAD]
        for url in system.urls:
            command += ["--url", url]
        command += ["--publish-to", self.args.publish_to] + options + ["--json"]
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

    def write(self, path, started, finished):
        a, lines = self.results.get("a", {}), []
        add = lines.append
        add("# The gateway cluster side by side with an Nchan cluster on one Redis (issue 12)")
        add("")
        add(f"Generated by `bench/cluster.sh {' '.join(self.args.argv)}` from {started:%Y-%m-%d %H:%M}"
            f" to {finished:%H:%M} UTC{' — **quick run: smoke test, not figures**' if self.quick else ''}.")
        add("")
        add(f"Machine: {os.cpu_count()} CPUs ({cpu_model()}), Linux {platform.release()}; "
            f"{first_line(['nginx', '-v'])}, Nchan {nchan_version()}, {first_line([REDIS, '--version'])[:60]}; "
            f"{first_line(['swift', '--version'])}.")
        if self.args.quiet_note:
            add("")
            add(f"Before the run: {self.args.quiet_note}.")
        notes = os.path.join(BENCH, "cluster-notes.md")
        if os.path.exists(notes) and not self.quick:
            add("")
            add(open(notes).read().strip())
        add("")
        add("## Summary (mean of the runs; each run's load average in brackets)")
        add("")
        add("| | " + " | ".join(LABEL[k] for k in self.args.systems) + " |")
        add("|---|" + "---|" * len(self.args.systems))

        def cells(values):
            return "| " + " | ".join(values) + " |"

        def per(kind, scenario, getter, digits=3):
            vals, loads = [], []
            for r in self.runs(scenario, kind):
                try:
                    v = getter(r)
                except (KeyError, TypeError, AttributeError):
                    v = None
                vals.append(v)
                loads.append(r.get("load_avg_1m") or (r.get("steps") or [{}])[-1].get("load_avg_1m"))
            m = mean([v for v in vals if v is not None])
            each = ", ".join(f"{fmt(v, digits)} @ {fmt(l, 2)}" for v, l in zip(vals, loads))
            return f"{fmt(m, digits)} ({each})" if vals else "–"

        def held_rate(r):
            h = self.highest(r)
            return h["rate"] if h else 0

        def held_p99(r):
            h = self.highest(r)
            return h["latency_p99_ms"] if h else None

        def held_redis(r):
            h = self.highest(r)
            return h.get("redis_cpu_us_per_publish") if h else None

        kinds = self.args.systems
        rows = [
            ("(a) highest rate held, publishes/s (1 topic × 1,000 subscribers)", "a", held_rate),
            ("(a) p99 at that rate, ms", "a", held_p99),
            ("(b) achieved rate, publishes/s (10,000 subscribers × 20/s)", "b", lambda r: r["publish_rate_achieved"]),
            ("(b) loss", "b", lambda r: r["loss"]),
            ("(b) p50 latency, ms", "b", lambda r: r["latency_p50_ms"]),
            ("(b) p99 latency, ms", "b", lambda r: r["latency_p99_ms"]),
            ("(c) Redis CPU per publish, µs — (a) at the highest rate held", "a", held_redis),
            ("(c) Redis CPU per publish, µs — (b)", "b", lambda r: r.get("redis_cpu_us_per_publish")),
            ("(c) Redis CPU per publish, µs — (a) at the highest rate held, publishing phase only", "a",
             lambda r: self.highest(r).get("redis_cpu_us_per_publish_publishing")),
            ("(c) Redis CPU per publish, µs — (b), publishing phase only", "b",
             lambda r: r.get("redis_cpu_us_per_publish_publishing")),
            ("(c) Redis CPU per publish, µs — (a) at the highest rate held, publishing phase less idle", "a",
             lambda r: self.highest(r).get("redis_cpu_us_per_publish_net")),
            ("(c) Redis CPU per publish, µs — (b), publishing phase less idle", "b",
             lambda r: r.get("redis_cpu_us_per_publish_net")),
            ("(c) Redis CPU idle (1 s before each run), ms per s — (b)", "b",
             lambda r: r.get("redis_idle_cpu_ms_per_s")),
            ("(c) Redis commands per publish — (b)", "b", lambda r: r.get("redis_commands_per_publish")),
            ("(c) Redis commands per publish — (b), publishing phase only", "b",
             lambda r: r.get("redis_commands_per_publish_publishing")),
        ]
        if self.quick:
            rows = [(t.replace("1,000", "100").replace("10,000", "200"), s, g) for t, s, g in rows]
        for title, scenario, getter in rows:
            add(cells([title] + [per(k, scenario, getter) for k in kinds]))
        def p99_by_rate(kind):
            """rate -> mean p99 over the runs whose step at that rate held (only rates every run held)."""
            runs = self.runs("a", kind)
            out = {}
            for rate in getattr(self, "rates", []):
                steps = [next((x for x in r["steps"] if x["rate"] == rate), None) for r in runs]
                if runs and all(x is not None and x["held"] for x in steps):
                    out[rate] = mean([x["latency_p99_ms"] for x in steps])
            return out

        def added_a(kind):
            base, mine = p99_by_rate("single"), p99_by_rate(kind)
            diffs = sorted(mine[r] - base[r] for r in mine if r in base)
            if not diffs:
                return "–"
            return f"{fmt(diffs[len(diffs) // 2])} ({fmt(diffs[0])} to {fmt(diffs[-1])}, {len(diffs)} rates)"

        single_b = mean([r["latency_p99_ms"] for r in self.runs("b", "single")])
        added = {}
        for k in ("cluster", "nchan"):
            p = mean([r["latency_p99_ms"] for r in self.runs("b", k)])
            added[k] = None if p is None or single_b is None else p - single_b
        if "single" in kinds:
            add(cells(["(a) p99 added over the single gateway, ms: median over the rates both held (range)"]
                      + [added_a(k) if k != "single" else "–" for k in kinds]))
            add(cells(["(b) p99 added over the single gateway, ms"]
                      + [fmt(added.get(k)) if k != "single" else "–" for k in kinds]))
        add("")
        add("## Targets")
        add("")
        if self.quick:
            add("Quick run: too small to judge; " + ("**gateway errors or loss: " + "; ".join(self.failures) + "**"
                                                     if self.failures else "no gateway errors and no loss."))
        else:
            g = mean([held_rate(r) for r in self.runs("a", "cluster")])
            n = mean([held_rate(r) for r in self.runs("a", "nchan")])
            if g is not None and n is not None:
                add(f"- highest rate held ≥ Nchan cluster's: {fmt(g)}/s vs {fmt(n)}/s — "
                    f"{'**met**' if g >= n else '**missed**'}")
            if added.get("cluster") is not None:
                add(f"- p99 added over a single node under 5 ms (scenario b): {fmt(added['cluster'])} ms — "
                    f"{'**met**' if added['cluster'] < 5 else '**missed**'}"
                    f" (Nchan cluster over the single gateway: {fmt(added.get('nchan'))} ms)")
            if self.failures:
                add("- gateway errors or loss: " + "; ".join(self.failures))
        add("")
        add("## (a) Stepped rates: one topic, subscribers split over the nodes, publishers on node 1")
        add("")
        add("Each cell: p99 ms / loss / achieved publishes/s / Redis CPU µs per publish / 1-min load average; "
            "**bold** = held. A run stops at its first step not held.")
        add("")
        header = [f"{LABEL[k]} #{i + 1}" for k in kinds for i in range(len(a.get(k, [])))]
        add("| rate | " + " | ".join(header) + " |")
        add("|---|" + "---|" * len(header))
        for rate in getattr(self, "rates", []):
            row = [f"{rate}/s"]
            for k in kinds:
                for run in a.get(k, []):
                    step = next((s for s in run.get("steps", []) if s["rate"] == rate), None)
                    if "failed" in run:
                        row.append("failed")
                    elif step is None:
                        row.append("")
                    else:
                        text = (f"{fmt(step['latency_p99_ms'])} / {step['loss']} / {fmt(step['publish_rate_achieved'])}"
                                f" / {fmt(step.get('redis_cpu_us_per_publish'))} / {step['load_avg_1m']}")
                        row.append(f"**{text}**" if step["held"] else text)
            add(cells(row))
        add("")
        add("CPU seconds per step on CPU 0 (node 1 / node 2 / redis-server) and others' share of CPU 0 / CPU 1:")
        add("")
        for k in kinds:
            for i, run in enumerate(a.get(k, [])):
                parts = []
                for s in run.get("steps", []):
                    c = s["cpu_s"]
                    parts.append(f"{s['rate']}/s: {' / '.join(fmt(c[x], 2) for x in sorted(c))}"
                                 f" ({s['others_cpu0_pct']} %/{s['others_cpu1_pct']} %)")
                add(f"- {LABEL[k]} #{i + 1}: " + ("; ".join(parts) if parts else run.get("failed", "")))
        add("")
        add("## (b) 10,000 subscribers split over the nodes, 20 publishes/s" if not self.quick
            else "## (b) 200 subscribers split over the nodes, 20 publishes/s")
        add("")
        keys = ["connections_per_url", "connections_failed", "publish_rate_achieved", "loss", "duplicates",
                "out_of_order", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "latency_max_ms",
                "publish_ack_p99_ms", "subscriber_count_mismatches", "cpu_s", "redis_cpu_us_per_publish",
                "redis_cpu_us_per_publish_publishing", "redis_commands_per_publish",
                "redis_cpu_us_per_publish_net", "redis_commands_per_publish_publishing", "redis_idle_cpu_ms_per_s", "load_cpu_s", "others_cpu0_pct", "others_cpu1_pct", "load_avg_1m",
                "error"]
        b = self.results.get("b", {})
        header = [f"{LABEL[k]} #{i + 1}" for k in kinds for i in range(len(b.get(k, [])))]
        add("| | " + " | ".join(header) + " |")
        add("|---|" + "---|" * len(header))
        for key in keys:
            row = [key]
            for k in kinds:
                for r in b.get(k, []):
                    if "failed" in r:
                        row.append(r["failed"][:80] if key == "error" else "failed")
                        continue
                    v = r.get(key)
                    if isinstance(v, dict):
                        v = " / ".join(f"{x} {fmt(v[x], 2)}" for x in sorted(v))
                    elif isinstance(v, list):
                        v = " + ".join(str(x) for x in v)
                    row.append(fmt(v) if not isinstance(v, str) else v)
            add(cells(row))
        add("")
        add("## Commands")
        add("")
        add("```sh")
        add(f"bench/cluster.sh {' '.join(self.args.argv)}")
        for scenario in sorted(self.commands):
            add(f"# scenario {scenario}")
            for c in self.commands[scenario]:
                add(c)
        add("```")
        add("")
        add("## Method")
        add("")
        add(__doc__.split("\n", 2)[2].strip())
        add("")
        add("Every system is started fresh for each run of each scenario (a new redis-server too); runs "
            "alternate systems (cluster, Nchan, single, then again). Nchan is `bench/nchan.conf.template` "
            "(compare.sh's) plus an `upstream { nchan_redis_server redis://…; }` and `nchan_redis_pass` "
            "(storage mode `distributed`, the default). Latency is `sse-load`'s: receive time − send time "
            "written in the payload by the publisher, one process, one monotonic clock, so a delivery on node 2 "
            "of a publish made on node 1 is timed and sequence-checked like any other. Loss is counted against "
            "the subscribers `sse-load` had streaming when each publish was sent, across both nodes. Redis CPU "
            "is INFO cpu's used_cpu_sys + used_cpu_user, delta over the whole `sse-load` run (connects "
            "included) ÷ publishes acked; 'others' is CPU busy time on that CPU not used by the servers or "
            "the load (other processes on the machine).")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def nchan_version():
    done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libnginx-mod-nchan"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def main():
    ap = argparse.ArgumentParser(description="The gateway cluster side by side with an Nchan cluster (issue 12).")
    ap.add_argument("--quick", action="store_true", help="a tiny version of every scenario (smoke test)")
    ap.add_argument("--runs", type=int, help="runs of each scenario (default 2, 1 with --quick)")
    ap.add_argument("--scenarios", default="a,b", help="a,b (c is measured during both)")
    ap.add_argument("--systems", default="cluster,nchan,single", help="cluster,nchan,single (or some of them)")
    ap.add_argument("--publish-to", default="first", choices=("first", "all"),
                    help="sse-load --publish-to: publishers on node 1 only (default) or spread over the nodes")
    ap.add_argument("--out", help="report path (default bench/cluster.md; /tmp/streams-cluster-quick.md with --quick)")
    ap.add_argument("--wait-quiet", type=float, default=0, metavar="MINUTES",
                    help="first wait up to MINUTES for the 1-min load average to drop below --quiet-load")
    ap.add_argument("--quiet-load", type=float, default=1.5)
    ap.add_argument("--keep-temp", action="store_true", help="keep the temp dir (configs and logs)")
    args = ap.parse_args()
    args.argv = sys.argv[1:]
    args.runs = args.runs or (1 if args.quick else 2)
    args.systems = [s for s in args.systems.split(",") if s in SYSTEMS]
    for binary in (GATEWAY, LOAD, REDIS):
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary} is missing: run bench/cluster.sh (it installs and builds)")
    if os.cpu_count() < 2:
        sys.exit("needs at least 2 CPUs (servers on CPU 0, load on CPU 1)")
    args.quiet_note = wait_for_quiet(args.wait_quiet, args.quiet_load) if args.wait_quiet > 0 else None
    bench = Bench(args)
    out = args.out or (os.path.join(tempfile.gettempdir(), "streams-cluster-quick.md") if args.quick
                       else os.path.join(BENCH, "cluster.md"))
    started = datetime.datetime.now(datetime.timezone.utc)
    log(f"temp dir {bench.tmp}; report to {out}")
    try:
        for scenario in ("a", "b"):
            if scenario in args.scenarios.split(","):
                getattr(bench, f"scenario_{scenario}")()
    finally:
        bench.write(out, started, datetime.datetime.now(datetime.timezone.utc))
        with open(out.rsplit(".", 1)[0] + ".json", "w") as f:
            json.dump(bench.results, f)
        if not args.keep_temp:
            shutil.rmtree(bench.tmp, ignore_errors=True)
    if bench.failures:
        log("gateway errors or loss:")
        for failure in bench.failures:
            log("  " + failure)
    if args.quick:
        print(open(out).read(), end="")
        return 1 if bench.failures else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
