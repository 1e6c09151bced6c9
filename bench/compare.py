#!/usr/bin/env python3
"""The gateway side by side with nginx + Nchan (issue 5). Run through bench/compare.sh,
which installs what is missing and builds first; see bench/README.md.

Every scenario runs against Nchan and against the gateway in turn (fresh server
each time), server on CPU 0, load on CPU 1, the same `sse-load` for both, at
least twice; the report goes to bench/RESULTS.md (or --out). Only 127.0.0.1 is
used; every wait is bounded; every server started is stopped by its pid.

  bench/compare.sh                 # full run, ~25 min, writes bench/RESULTS.md
  bench/compare.sh --quick         # seconds per scenario; exit 1 on errors or loss against the gateway
  bench/compare.sh --wait-quiet 40 # first wait (up to 40 min) for the 1-min load average to drop below 1.5
"""
import argparse, datetime, json, os, platform, resource, shlex, shutil, signal, socket, statistics
import subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
GATEWAY = os.path.join(ROOT, ".build", "release", "sse-gateway")
LOAD = os.path.join(ROOT, ".build", "release", "sse-load")
TEMPLATE = os.path.join(BENCH, "nchan.conf.template")
SERVER_CPU, LOAD_CPU = "0", "1"
FD_LIMIT = 20_000
SYSTEMS = ("nchan", "gateway")
LABEL = {"nchan": "Nchan", "gateway": "gateway"}
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(*parts):
    print(time.strftime("%H:%M:%S"), *parts, file=sys.stderr, flush=True)


def limit_fds():
    """preexec_fn: at most FD_LIMIT descriptors (raised to it when the hard limit allows, or as root)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < FD_LIMIT:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))
            return
        except (ValueError, OSError):
            pass
    target = FD_LIMIT if hard == resource.RLIM_INFINITY else min(FD_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, target))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def proc_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def cpu_busy_seconds():
    """Per CPU, user + nice + system time so far (from /proc/stat), in seconds."""
    busy = {}
    with open("/proc/stat") as f:
        for line in f:
            name, *fields = line.split()
            if name.startswith("cpu") and name != "cpu":
                busy[name[3:]] = (int(fields[0]) + int(fields[1]) + int(fields[2])) / CLK_TCK
    return busy


class Interference:
    """How much CPU other processes took on the server's and the load's CPUs during a run:
    CPU busy time (user + nice + system) minus what the server and the load client used,
    as a share of the wall time. Near 0 on a quiet machine."""

    def __init__(self, server):
        self.server = server

    def __enter__(self):
        self.wall, self.busy, self.server_cpu = time.monotonic(), cpu_busy_seconds(), self.server.cpu()
        return self

    def finish(self, result, load_cpu):
        wall = time.monotonic() - self.wall
        busy = cpu_busy_seconds()
        server_cpu = self.server.cpu() - self.server_cpu
        result["server_cpu_s"] = round(server_cpu, 3)
        result["others_cpu0_pct"] = round(max(0.0, busy[SERVER_CPU] - self.busy[SERVER_CPU] - server_cpu) / wall * 100)
        result["others_cpu1_pct"] = round(max(0.0, busy[LOAD_CPU] - self.busy[LOAD_CPU] - load_cpu) / wall * 100)
        result["load_avg_1m"] = round(os.getloadavg()[0], 2)

    def __exit__(self, *exc):
        pass


def children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


class Server:
    """One server process, pinned to CPU 0. `pid` is the process measured (the nginx worker)."""

    def __init__(self, kind, workdir, tls=None):
        self.kind, self.workdir, self.tls = kind, workdir, tls
        self.port = free_port()
        self.proc = None
        self.pid = None
        self.command = None

    def start(self):
        os.makedirs(self.workdir, exist_ok=True)
        out = open(os.path.join(self.workdir, "server.out"), "w")
        if self.kind == "nchan":
            with open(TEMPLATE) as f:
                conf = f.read().replace("@DIR@", self.workdir).replace("@PORT@", str(self.port))
            if self.tls:
                cert, key = self.tls
                conf = conf.replace(f"listen 127.0.0.1:{self.port} backlog=4096;",
                                    f"listen 127.0.0.1:{self.port} ssl backlog=4096;\n"
                                    f"    ssl_certificate {cert};\n    ssl_certificate_key {key};")
            path = os.path.join(self.workdir, "nginx.conf")
            with open(path, "w") as f:
                f.write(conf)
            self.command = ["taskset", "-c", SERVER_CPU, "nginx", "-c", path, "-p", self.workdir + "/",
                            "-e", os.path.join(self.workdir, "error.log")]
        else:
            self.command = ["taskset", "-c", SERVER_CPU, GATEWAY, "--host", "127.0.0.1", "--port", str(self.port),
                            "--public", os.path.join(ROOT, "public")]
            if self.tls:
                self.command += ["--tls-cert", self.tls[0], "--tls-key", self.tls[1]]
        self.proc = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT, preexec_fn=limit_fds,
                                     cwd=self.workdir)
        if not wait_for_port(self.port, self.proc):
            self.stop()
            raise RuntimeError(f"{self.kind} did not start: {self.tail()}")
        self.pid = self.proc.pid
        if self.kind == "nchan":
            deadline = time.monotonic() + 5
            workers = children(self.proc.pid)
            while not workers and time.monotonic() < deadline:
                time.sleep(0.05)
                workers = children(self.proc.pid)
            if len(workers) != 1:
                self.stop()
                raise RuntimeError(f"expected one nginx worker, found {workers}")
            self.pid = workers[0]
        time.sleep(0.3)
        return self

    def tail(self):
        try:
            with open(os.path.join(self.workdir, "server.out")) as f:
                text = f.read()[-400:]
            if self.kind == "nchan" and os.path.exists(os.path.join(self.workdir, "error.log")):
                with open(os.path.join(self.workdir, "error.log")) as f:
                    text += f.read()[-400:]
            return text.strip()
        except OSError:
            return ""

    def rss_kib(self):
        return proc_status(self.pid, "VmRSS")

    def fds(self):
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def cpu(self):
        return proc_cpu_seconds(self.pid)

    def stop(self):
        if self.proc is None:
            return
        worker = self.pid if self.kind == "nchan" and self.pid != self.proc.pid else None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if worker:  # nginx's master waits for its worker; make sure, by pid
            deadline = time.monotonic() + 5
            while pid_alive(worker) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_alive(worker):
                os.kill(worker, signal.SIGKILL)
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class Sampler(threading.Thread):
    """Samples a server's (time, RSS KiB, open descriptors) every `interval` seconds until stopped."""

    def __init__(self, server, interval=0.5):
        super().__init__(daemon=True)
        self.server, self.interval, self.samples = server, interval, []
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            try:
                self.samples.append((time.monotonic(), self.server.rss_kib(), self.server.fds()))
            except (OSError, ValueError):
                return
            self.halt.wait(self.interval)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.halt.set()
        self.join(timeout=5)

    def peak_rss(self):
        return max((s[1] for s in self.samples), default=0)

    def rss_while_fds_at_least(self, fds):
        """Median RSS of the samples taken while the server held at least `fds` descriptors."""
        held = [s[1] for s in self.samples if s[2] >= fds]
        return statistics.median(held) if held else None


class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.tmp = tempfile.mkdtemp(prefix="streams-bench-")
        self.results = {}      # scenario -> {system -> [run results]}
        self.commands = {}     # scenario -> [command lines, $PORT for the port]
        self.notes = {}        # scenario -> [notes]
        self.failures = []     # gateway errors or loss (what --quick exits 1 on)
        self.loads = []        # (scenario, load average before)
        self.serial = 0
        # Per system: acked publishes, and those whose reply's subscriber count differed from sse-load's.
        self.counts = {s: [0, 0, 0, 0] for s in SYSTEMS}  # publishes, mismatches, expected, server-counted

    # --- running things ---------------------------------------------------------------

    def workdir(self, kind):
        self.serial += 1
        return os.path.join(self.tmp, f"{self.serial:03d}-{kind}")

    def note_command(self, scenario, command, port):
        text = " ".join(shlex.quote(c) for c in command).replace(str(port), "$PORT").replace(self.tmp, "$TMP")
        listed = self.commands.setdefault(scenario, [])
        if text not in listed:
            listed.append(text)

    def sse_load(self, scenario, server, options, timeout):
        command = ["taskset", "-c", LOAD_CPU, LOAD, "--url", f"http://127.0.0.1:{server.port}"] + options + ["--json"]
        self.note_command(scenario, command, server.port)
        self.note_command(scenario, server.command, server.port)
        with Interference(server) as watch:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, preexec_fn=limit_fds)
        lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
        if done.returncode != 0 or not lines:
            raise RuntimeError(f"sse-load exited {done.returncode}: {done.stderr.strip()[-300:]}")
        result = json.loads(lines[-1])
        watch.finish(result, result["load_cpu_s"])
        tally = self.counts[server.kind]
        tally[0] += result["publishes_acked"]
        tally[1] += result["subscriber_count_mismatches"]
        tally[2] += result["expected_deliveries"]
        tally[3] += result["server_counted_deliveries"] or 0
        return result

    def check(self, scenario, system, result, label, loss=True):
        """Records gateway errors and loss (the --quick failure conditions)."""
        if system != "gateway":
            return
        problems = []
        for key in ("connections_failed", "publishes_failed", "duplicates", "out_of_order",
                    "slow_subscriber_disconnects", "not_on_latest"):
            if result.get(key):
                problems.append(f"{key}={result[key]}")
        if loss and result.get("loss"):
            problems.append(f"loss={result['loss']}")
        if result.get("error"):
            problems.append(f"error={result['error']!r}")
        if problems:
            self.failures.append(f"scenario {scenario} ({label}): " + ", ".join(problems))

    def each(self, scenario, title, body):
        """Runs body(system, run) for every run and system, alternating systems, catching errors."""
        runs = self.args.runs
        self.loads.append((scenario, os.getloadavg()[0]))
        log(f"scenario {scenario}: {title} (load average {os.getloadavg()[0]:.2f})")
        store = self.results.setdefault(scenario, {s: [] for s in self.args.systems})
        for run in range(1, runs + 1):
            for system in self.args.systems:
                started = time.monotonic()
                try:
                    result = body(system, run)
                except Exception as error:  # noqa: BLE001 — recorded and reported
                    result = {"failed": f"{type(error).__name__}: {error}"}
                    log(f"  {system} run {run}: FAILED {error}")
                    if system == "gateway":
                        self.failures.append(f"scenario {scenario} ({system} run {run}): {error}")
                store[system].append(result)
                log(f"  {system} run {run}: {time.monotonic() - started:.0f} s")

    # --- scenarios ------------------------------------------------------------------------

    def idle_hold(self, scenario, subscribers, topics, hold, ramp):
        def body(system, run):
            with Server(system, self.workdir(system)) as server:
                time.sleep(0.5)
                base_rss, base_fds = server.rss_kib(), server.fds()
                with Sampler(server) as sampler:
                    r = self.sse_load(scenario, server, [
                        "--subscribers", str(subscribers), "--topics", str(topics), "--channel", "events",
                        "--publishers", "0", "--duration", f"{hold}s", "--ramp", f"{ramp}s",
                        "--connect-timeout", "30s",
                        "--topic-prefix", f"idle/{run}"], timeout=hold + 120)
                held = sampler.rss_while_fds_at_least(base_fds + r["connections_established"])
                if held is None:  # sampling missed the hold (should not happen): the peak instead
                    held = sampler.peak_rss()
                r.update(rss_before_kib=base_rss, rss_held_kib=held,
                         bytes_per_connection=round((held - base_rss) * 1024 / max(1, r["connections_established"])))
                self.check(scenario, system, r, f"{system} run {run}")
                return r
        return body

    def scenario_1(self):
        n, topics, hold = (200, 10, 1) if self.quick else (10_000, 100, 10)
        # Connects spread at 5,000/s: all at once overflows the kernel's SYN queue (tcp_max_syn_backlog,
        # 2,048 here) and then measures SYN retransmission timers rather than the server.
        self.each("1", f"idle hold, {n} subscribers over {topics} topics",
                  self.idle_hold("1", n, topics, hold, n / 5000))
        if not self.quick:
            self.each("1b", "idle hold, 19,000 subscribers over 100 topics",
                      self.idle_hold("1b", 19_000, 100, 10, 19_000 / 5000))

    def scenario_2(self):
        if self.quick:
            subscribers, rates, step, flood = 50, [25, 50], 1, 1
        else:
            subscribers, rates, step, flood = 1000, [25, 50, 75, 100, 150, 200, 300, 400, 600, 800], 5, 10
        self.stepped = rates

        def body(system, run):
            out = {"steps": []}
            with Server(system, self.workdir(system)) as server:
                for rate in rates:
                    r = self.sse_load("2", server, [
                        "--subscribers", str(subscribers), "--topics", "1", "--publishers", "4", "--rate", str(rate),
                        "--size", "128", "--duration", f"{step}s", "--ramp", "1s", "--settle", "2s",
                        "--topic-prefix", f"fanout/{run}/{rate}"], timeout=step + 120)
                    r["held"] = held(r)
                    self.check("2", system, r, f"{system} run {run}, {rate}/s")
                    out["steps"].append(r)
                r = self.sse_load("2", server, [
                    "--subscribers", str(subscribers), "--topics", "1", "--publishers", "4", "--rate", "0",
                    "--size", "128", "--duration", f"{flood}s", "--ramp", "1s", "--settle", "2s",
                    "--topic-prefix", f"fanout/{run}/flood"], timeout=flood + 120)
                out["flood"] = r
            return out
        self.each("2", f"fan-out, 1 topic, {subscribers} subscribers, stepped rates", body)

    def scenario_3(self):
        n, duration = (200, 2) if self.quick else (10_000, 10)

        def body(system, run):
            with Server(system, self.workdir(system)) as server:
                r = self.sse_load("3", server, [
                    "--subscribers", str(n), "--topics", "1", "--publishers", "4", "--rate", "20", "--size", "128",
                    "--duration", f"{duration}s", "--ramp", "2s", "--settle", "5s", "--connect-timeout", "30s",
                    "--topic-prefix", f"latency/{run}"], timeout=duration + 180)
                self.check("3", system, r, f"{system} run {run}")
                return r
        self.each("3", f"latency, {n} subscribers on one topic, 20 publishes/s", body)

    def scenario_4(self):
        topics, duration = (50, 2) if self.quick else (2000, 10)

        def body(system, run):
            with Server(system, self.workdir(system)) as server:
                r = self.sse_load("4", server, [
                    "--subscribers", str(2 * topics), "--topics", str(topics), "--publishers", "16", "--rate", "0",
                    "--size", "128", "--duration", f"{duration}s", "--ramp", "1s", "--settle", "2s",
                    "--topic-prefix", f"many/{run}"], timeout=duration + 120)
                self.check("4", system, r, f"{system} run {run}")
                return r
        self.each("4", f"many topics, {topics} topics x 2 subscribers, round-robin, unpaced", body)

    def scenario_5(self):
        duration = 2 if self.quick else 10
        wrk = shutil.which("wrk")
        if not wrk:
            self.notes.setdefault("5", []).append("wrk is not installed: only the sse-load figure is given.")
        script = os.path.join(self.tmp, "post.lua")
        with open(script, "w") as f:
            f.write('wrk.method = "POST"\nwrk.body = string.rep("x", 128)\n'
                    'wrk.headers["Content-Type"] = "text/plain"\nwrk.headers["Accept"] = "application/json"\n'
                    'local n = 0\nrequest = function()\n  n = n + 1\n'
                    '  return wrk.format(nil, "/events/publish-only/" .. (n % 100))\nend\n')

        def body(system, run):
            with Server(system, self.workdir(system)) as server:
                r = self.sse_load("5", server, [
                    "--subscribers", "0", "--topics", "100", "--publishers", "16", "--rate", "0", "--size", "128",
                    "--duration", f"{duration}s", "--topic-prefix", f"publish-only/{run}"], timeout=duration + 60)
                self.check("5", system, r, f"{system} run {run}")
                if wrk:
                    command = ["taskset", "-c", LOAD_CPU, wrk, "-t1", "-c32", f"-d{duration}s", "-s", script,
                               f"http://127.0.0.1:{server.port}"]
                    self.note_command("5", command, server.port)
                    wrk_usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                    with Interference(server) as watch:
                        done = subprocess.run(command, capture_output=True, text=True, timeout=duration + 60)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    w = {}
                    watch.finish(w, (after.ru_utime + after.ru_stime) - (wrk_usage.ru_utime + wrk_usage.ru_stime))
                    r["wrk_server_cpu_s"] = w["server_cpu_s"]
                    r["wrk_others_cpu0_pct"], r["wrk_others_cpu1_pct"] = w["others_cpu0_pct"], w["others_cpu1_pct"]
                    r["wrk_rps"] = r["wrk_non2xx"] = r["wrk_errors"] = None
                    for line in done.stdout.splitlines():
                        if line.startswith("Requests/sec:"):
                            r["wrk_rps"] = float(line.split()[1])
                        elif "Non-2xx or 3xx responses:" in line:
                            r["wrk_non2xx"] = int(line.split(":")[1])
                        elif "Socket errors:" in line:
                            r["wrk_errors"] = line.split(":", 1)[1].strip()
                    if r["wrk_rps"] is None:
                        raise RuntimeError(f"wrk: {done.stdout[-200:]} {done.stderr[-200:]}")
                    if system == "gateway" and (r["wrk_non2xx"] or r["wrk_errors"]):
                        self.failures.append(f"scenario 5 (wrk, run {run}): non-2xx {r['wrk_non2xx']}, "
                                             f"socket errors {r['wrk_errors']}")
                return r
        self.each("5", "publish only, keep-alive POSTs, no subscribers", body)

    def scenario_6(self):
        publishes, cap = (2000, 20) if self.quick else (100_000, 60)
        self.stall_target, self.stall_cap = publishes, cap

        def stalled(system, run):
            with Server(system, self.workdir(system)) as server:
                time.sleep(0.3)
                base = server.rss_kib()
                with Sampler(server, 0.25) as sampler:
                    r = self.sse_load("6", server, [
                        "--channel", "state", "--subscribers", "1", "--topics", "1", "--publishers", "4",
                        "--rate", "0", "--size", "128", "--publishes", str(publishes), "--duration", f"{cap}s",
                        "--stall-after", "0", "--settle", "120s", "--topic-prefix", f"stalled/{run}"],
                        timeout=cap + 300)
                r.update(rss_before_kib=base, rss_peak_kib=sampler.peak_rss(), rss_after_kib=server.rss_kib())
                r["growth_per_publish_b"] = round((r["rss_peak_kib"] - base) * 1024 / max(1, r["publishes_acked"]), 1)
                r["on_latest"] = (r["connections_established"] == 1 and r["slow_subscriber_disconnects"] == 0
                                  and r["not_on_latest"] == 0 and r["events_received"] > 0)
                self.check("6", system, r, f"{system} run {run}")
                if system == "gateway" and r["publishes_acked"] < publishes:
                    self.failures.append(f"scenario 6 ({system} run {run}): only {r['publishes_acked']} "
                                         f"of {publishes} publishes in {cap} s")
                return r
        self.each("6", f"state under a stalled reader, {publishes} publishes (at most {cap} s)", stalled)

        # Fill every topic's 256-event window first, then publish as many again (and more).
        topics = 4 if self.quick else 100
        fill, rest = 256 * topics, (1000 if self.quick else 100_000 - 256 * topics)
        distinct = 2000 if self.quick else 100_000

        def unsubscribed(system, run):
            out = {}
            with Server(system, self.workdir(system)) as server:
                time.sleep(0.3)
                out["rss_before_kib"] = server.rss_kib()
                for phase, count in (("fill", fill), ("rest", rest)):
                    r = self.sse_load("6b", server, [
                        "--subscribers", "0", "--topics", str(topics), "--publishers", "16", "--rate", "0",
                        "--size", "128", "--publishes", str(count), "--duration", "300s",
                        "--topic-prefix", f"nobody/{run}"],
                        timeout=400)
                    self.check("6b", system, r, f"{system} run {run}, {phase}")
                    out[f"{phase}_acked"] = r["publishes_acked"]
                    out[f"rss_after_{phase}_kib"] = server.rss_kib()
                out["growth_per_publish_after_fill_b"] = round(
                    (out["rss_after_rest_kib"] - out["rss_after_fill_kib"]) * 1024 / max(1, out["rest_acked"]), 1)
                out["growth_per_publish_b"] = round(
                    (out["rss_after_rest_kib"] - out["rss_before_kib"]) * 1024 / max(1, fill + rest), 1)
            with Server(system, self.workdir(system)) as server:
                time.sleep(0.3)
                before = server.rss_kib()
                r = self.sse_load("6b", server, [
                    "--subscribers", "0", "--topics", str(distinct), "--publishers", "16", "--rate", "0",
                    "--size", "128", "--publishes", str(distinct), "--duration", "300s",
                    "--topic-prefix", f"nobody-distinct/{run}"], timeout=400)
                self.check("6b", system, r, f"{system} run {run}, distinct topics")
                out["distinct_acked"] = r["publishes_acked"]
                out["distinct_growth_per_topic_b"] = round(
                    (server.rss_kib() - before) * 1024 / max(1, r["publishes_acked"]), 1)
            return out
        self.fill, self.rest, self.distinct, self.nobody_topics = fill, rest, distinct, topics
        self.each("6b", f"publishing to topics nobody subscribes to", unsubscribed)

    def scenario_7(self):
        reason = self.tls_unavailable()
        if reason:
            self.notes.setdefault("7", []).append(f"Skipped: {reason}")
            log(f"scenario 7: skipped — {reason}")
            return
        n, hold = (50, 1) if self.quick else (10_000, 10)
        cert, key = self.tls_files

        def body(system, run):
            with Server(system, self.workdir(system), tls=(cert, key)) as server:
                time.sleep(0.5)
                base_rss, base_fds = server.rss_kib(), server.fds()
                command = ["taskset", "-c", LOAD_CPU, sys.executable, os.path.join(BENCH, "tls_hold.py"),
                           "--port", str(server.port), "--count", str(n), "--hold", str(hold), "--cacert", cert,
                           "--prefix", f"tls/{run}"]
                self.note_command("7", command, server.port)
                self.note_command("7", server.command, server.port)
                usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                with Sampler(server) as sampler, Interference(server) as watch:
                    done = subprocess.run(command, capture_output=True, text=True, timeout=hold + 300,
                                          preexec_fn=limit_fds)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
                if not lines:
                    raise RuntimeError(f"tls_hold: {done.stderr[-300:]}")
                r = json.loads(lines[-1])
                # tls_hold's count of failed connections; "failed" marks a failed run here.
                r["connections_failed"] = r.pop("failed")
                watch.finish(r, (after.ru_utime + after.ru_stime) - (usage.ru_utime + usage.ru_stime))
                held = sampler.rss_while_fds_at_least(base_fds + r["established"]) or sampler.peak_rss()
                r.update(rss_before_kib=base_rss, rss_held_kib=held,
                         bytes_per_connection=round((held - base_rss) * 1024 / max(1, r["established"])))
                if system == "gateway" and (r["connections_failed"] or r["error"] or r["ended_early"]):
                    self.failures.append(f"scenario 7 (gateway run {run}): {r}")
                return r
        self.each("7", f"TLS hold, {n} HTTPS subscribers", body)

    def tls_unavailable(self):
        """Why scenario 7 cannot run, or None: the gateway must list --tls-cert and really speak TLS."""
        if "gateway" not in self.args.systems:
            return "the gateway is not among --systems"
        help_text = subprocess.run([GATEWAY, "--help"], capture_output=True, text=True, timeout=10).stdout
        if "--tls-cert" not in help_text:
            return "`sse-gateway --help` does not list --tls-cert (TLS has not landed)."
        if not shutil.which("openssl"):
            return "openssl is not installed (needed for a throwaway certificate)."
        cert, key = os.path.join(self.tmp, "cert.pem"), os.path.join(self.tmp, "key.pem")
        made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                               "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                               "-addext", "subjectAltName=IP:127.0.0.1"], capture_output=True, timeout=60)
        if made.returncode != 0:
            return f"openssl could not make a certificate: {made.stderr.decode()[-200:]}"
        self.tls_files = (cert, key)
        import ssl
        context = ssl.create_default_context(cafile=cert)
        try:
            with Server("gateway", self.workdir("gateway-tls-probe"), tls=(cert, key)) as server:
                with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
                    with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                        tls.sendall(b"GET /events/probe/0 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    b"Accept: text/event-stream\r\n\r\n")
                        head = tls.recv(4096)
                if not head.startswith(b"HTTP/1.1 200"):
                    return f"the gateway took --tls-cert but answered a TLS request with {head[:40]!r}."
        except (OSError, RuntimeError) as error:
            return ("`sse-gateway --help` lists --tls-cert, but the gateway does not serve TLS yet "
                    f"(a TLS handshake with it fails: {error}).")
        return None

    # --- the report -------------------------------------------------------------------

    def write(self, path, started, finished):
        w = Report(self)
        text = w.render(started, finished)
        with open(path, "w") as f:
            f.write(text)
        raw = os.path.splitext(path)[0] + ".json"
        with open(raw, "w") as f:
            json.dump({"started": started.isoformat(), "finished": finished.isoformat(), "argv": self.args.argv,
                       "results": self.results, "commands": self.commands, "notes": self.notes,
                       "failures": self.failures}, f, indent=1)
        log(f"wrote {path} and {raw}")


def held(r):
    """A step holds: zero loss, no subscriber cut, p99 under 100 ms, at least 95 % of the asked rate achieved."""
    return (r.get("loss") == 0 and r.get("slow_subscriber_disconnects") == 0 and r.get("connections_failed") == 0
            and r.get("latency_p99_ms") is not None and r["latency_p99_ms"] < 100
            and r["publish_rate_achieved"] >= 0.95 * r["rate"])


def fmt(value, digits=3):
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "**no**"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        text = f"{value:.{digits}g}"
        return text if "e" not in text else f"{value:.0f}"
    return str(value)


def mean(values):
    values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return sum(values) / len(values) if values else None


class Report:
    def __init__(self, bench):
        self.b = bench
        self.lines = []

    def out(self, text=""):
        self.lines.append(text)

    def runs(self, scenario):
        return self.b.results.get(scenario, {})

    def table(self, scenario, rows):
        """rows: (label, getter(run result) -> value, better: 'higher'|'lower'|None)."""
        data = self.runs(scenario)
        systems = [s for s in SYSTEMS if s in data]
        header = ["", *[f"{LABEL[s]} #{i + 1}" for s in systems for i in range(len(data[s]))]]
        ratio = set(systems) == set(SYSTEMS)
        if ratio:
            header += ["gateway ÷ Nchan"]
        self.out("| " + " | ".join(header) + " |")
        self.out("|" + "---|" * len(header))
        failed = {s: [r.get("failed") for r in data[s] if "failed" in r] for s in systems}
        for label, getter, better in rows:
            cells, means = [], {}
            for s in systems:
                values = []
                for r in data[s]:
                    if "failed" in r:
                        cells.append("failed")
                        continue
                    try:
                        v = getter(r)
                    except (KeyError, TypeError, ZeroDivisionError):
                        v = None
                    values.append(v)
                    cells.append(fmt(v))
                means[s] = mean(values)
            if ratio:
                if better and means.get("nchan") and means.get("gateway") is not None:
                    x = means["gateway"] / means["nchan"]
                    cells.append(f"{x:.2f}× ({better} is better)")
                else:
                    cells.append("")
            self.out(f"| {label} | " + " | ".join(cells) + " |")
        self.out()
        for s in systems:
            for reason in failed[s]:
                self.out(f"- {LABEL[s]}: a run failed: `{reason}`")
        if any(failed.values()):
            self.out()

    def commands(self, scenario):
        cmds = self.b.commands.get(scenario)
        for note in self.b.notes.get(scenario, []):
            self.out(note)
            self.out()
        if cmds:
            self.out("<details><summary>commands</summary>")
            self.out()
            self.out("```sh")
            for c in cmds:
                self.out(c)
            self.out("```")
            self.out("</details>")
            self.out()

    def render(self, started, finished):
        b = self.b
        self.out("# The gateway side by side with nginx + Nchan")
        self.out()
        self.out(f"Written by `bench/compare.sh{' ' + ' '.join(b.args.argv) if b.args.argv else ''}` "
                 f"({'quick smoke run: tiny scenarios, not figures to quote' if b.quick else 'full run'}). "
                 "Each scenario ran against Nchan and the gateway in turn, a fresh server each time, "
                 f"the server pinned to CPU {SERVER_CPU} (`taskset`; nginx with one worker, `daemon off`), "
                 f"the load pinned to CPU {LOAD_CPU}, the same `sse-load` for both; "
                 f"{b.args.runs} run{'s' if b.args.runs > 1 else ''} of each (#1, #2, … below), alternating systems. "
                 "Ratios are gateway ÷ Nchan of the means of the runs. Server memory is `VmRSS` of "
                 "`/proc/<pid>/status` (for nginx, of the worker); server CPU is its user + system time over the "
                 "load run. See bench/README.md for what each scenario does and how to read it.")
        self.out()
        self.machine(started, finished)
        self.summary()
        self.s1()
        self.s2()
        self.s3()
        self.s4()
        self.s5()
        self.s6()
        self.s7()
        self.soak()
        return "\n".join(self.lines) + "\n"

    def soak(self):
        """The latest long soak's figures (issue 8), kept in bench/soak/SUMMARY.md by whoever ran it."""
        path = os.path.join(BENCH, "soak", "SUMMARY.md")
        if not os.path.exists(path):
            return
        with open(path) as f:
            text = f.read().strip()
        self.out("## Soak: descriptors, memory and subscribers before and after (issue 8)")
        self.out()
        self.out("Not a part of this comparison: the latest `bench/soak/run.sh` run, copied from "
                 "`bench/soak/SUMMARY.md` (details in `bench/soak/RESULTS.md`).")
        self.out()
        self.out(text)
        self.out()

    def machine(self, started, finished):
        b = self.b
        cpu = "?"
        try:
            with open("/proc/cpuinfo") as f:
                cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        except (OSError, StopIteration):
            pass
        mem = proc_meminfo_gib()
        swift = first_line(["swift", "--version"])
        nginx = first_line(["nginx", "-v"])
        nchan = first_line(["dpkg-query", "-W", "-f=${Version}", "libnginx-mod-nchan"])
        commit = first_line(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
        dirty = first_line(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])
        self.out("## Machine and versions")
        self.out()
        self.out(f"- date: {started:%Y-%m-%d %H:%M} – {finished:%H:%M} UTC")
        self.out(f"- machine: `nproc` = {os.cpu_count()}, {cpu}, {mem:.1f} GiB RAM, {platform.system()} "
                 f"{platform.release()}")
        loads = ", ".join(f"{s}: {l:.2f}" for s, l in b.loads)
        self.out(f"- 1-minute load average when each scenario began: {loads}")
        if b.quiet_note:
            self.out(f"- {b.quiet_note}")
        self.out(f"- swift: {swift}")
        self.out(f"- nginx: {nginx}; libnginx-mod-nchan {nchan}")
        self.out(f"- wrk: {first_line(['wrk', '--version']) if shutil.which('wrk') else 'not installed'}")
        self.out(f"- streams commit: {commit}{' (with uncommitted changes)' if dirty else ''}")
        self.out()
        self.out("Deliveries owed (and so loss) are counted by `sse-load` from the subscribers it had streaming "
                 "when each publish was sent; the servers' own counts (the `subscribers` field of each publish "
                 "reply) were, over every `sse-load` run of this report:")
        self.out()
        for system in SYSTEMS:
            p, m, e, c = b.counts[system]
            if p:
                self.out(f"- {LABEL[system]}: {p:,} publishes acked, {m:,} replies whose count differed "
                         f"from sse-load's; deliveries owed {e:,} by sse-load's count, {c:,} by the server's")
        self.out()

    def summary(self):
        lines = Targets(self.b).lines()
        if lines:
            self.out("## Headline and issue-5 targets")
            self.out()
            for line in lines:
                self.out(line)
            self.out()

    def s1(self):
        rows = [
            ("connections established", lambda r: r["connections_established"], None),
            ("connections failed", lambda r: r["connections_failed"], None),
            ("last connected after (s; ramp included)", lambda r: r["connect_s"], "lower"),
            ("connect p50 (ms)", lambda r: r["connect_p50_ms"], "lower"),
            ("connect p99 (ms)", lambda r: r["connect_p99_ms"], "lower"),
            ("connect max (ms)", lambda r: r["connect_max_ms"], "lower"),
            ("server RSS before (MiB)", lambda r: r["rss_before_kib"] / 1024, None),
            ("server RSS holding them (MiB)", lambda r: r["rss_held_kib"] / 1024, None),
            ("**bytes per idle subscriber**", lambda r: r["bytes_per_connection"], "lower"),
            ("streams ended early", lambda r: r["slow_subscriber_disconnects"], None),
            ("server CPU over the run (s)", lambda r: r["server_cpu_s"], "lower"),
            ("first error", lambda r: r["error"] and r["error"][:80], None),
            OTHERS,
        ]
        for scenario, title in (("1", "1. Idle hold"), ("1b", "1b. Idle hold at the 19,000 target")):
            if scenario not in self.b.results:
                continue
            sample = next((r for rs in self.runs(scenario).values() for r in rs if "failed" not in r), {})
            self.out(f"## {title}: {fmt(sample.get('subscribers'))} `/events` subscribers over "
                     f"{fmt(sample.get('topics'))} topics, connecting over {fmt(sample.get('ramp_s'))} s "
                     f"(5,000 a second), held {fmt(sample.get('duration_s'))} s")
            self.out()
            self.table(scenario, rows)
            self.commands(scenario)

    def s2(self):
        data = self.runs("2")
        if not data:
            return
        rates = self.b.stepped
        sample = next((r["steps"][0] for rs in data.values() for r in rs if "steps" in r and r["steps"]), {})
        self.out(f"## 2. Fan-out at stepped rates: 1 topic, {fmt(sample.get('subscribers'))} subscribers, "
                 f"4 publishers, {fmt(sample.get('duration_s'))} s a step")
        self.out()
        self.out("A step **holds** when loss is 0, no subscriber was cut or failed, p99 < 100 ms and the achieved "
                 "publish rate is ≥ 95 % of the asked one. The *highest rate held* is the highest step held with "
                 "every lower step held too.")
        self.out()
        rows = [
            ("**highest rate held (publishes/s)**", lambda r: highest_held(r, rates), "higher"),
            ("deliveries/s at that rate", lambda r: held_step(r, rates)["deliveries_per_s"], "higher"),
            ("p99 at that rate (ms)", lambda r: held_step(r, rates)["latency_p99_ms"], "lower"),
        ]
        self.table("2", rows)
        self.out("Every step: ✓ held or ✗ not · achieved publishes/s · deliveries/s · p99 ms · loss · server CPU "
                 "and sse-load CPU as a share of the step's elapsed time (connect and settle included; a share "
                 "near 100 % is a saturated core — for sse-load, the tool rather than the server is the limit) · "
                 "other processes' share of CPU 0 / CPU 1 (the shared machine's interference):")
        self.out()
        systems = [s for s in SYSTEMS if s in data]
        header = ["asked/s"] + [f"{LABEL[s]} #{i + 1}" for s in systems for i in range(len(data[s]))]
        self.out("| " + " | ".join(header) + " |")
        self.out("|" + "---|" * len(header))
        for index, rate in enumerate(rates):
            cells = []
            for s in systems:
                for r in data[s]:
                    if "failed" in r or index >= len(r.get("steps", [])):
                        cells.append("failed")
                        continue
                    st = r["steps"][index]
                    cells.append(f"{'✓' if st['held'] else '✗'} {fmt(st['publish_rate_achieved'])} · "
                                 f"{fmt(st['deliveries_per_s'])} · {fmt(st['latency_p99_ms'])} · {fmt(st['loss'])}"
                                 + (f" · {st['slow_subscriber_disconnects']} cut"
                                    if st["slow_subscriber_disconnects"] else "")
                                 + f" · {share(st['server_cpu_s'], st)} / {share(st['load_cpu_s'], st)}"
                                 + f" · {st['others_cpu0_pct']} / {st['others_cpu1_pct']} %")
            self.out(f"| {rate} | " + " | ".join(cells) + " |")
        self.out()
        self.out(f"Flood (publishers as fast as acks return, {fmt(self.flood_seconds())} s) — reported, not targeted:")
        self.out()
        self.b.results["2flood"] = {s: [r.get("flood", {"failed": r.get("failed", "no flood run")}) for r in rs]
                                    for s, rs in data.items()}
        self.table("2flood", [
            ("publishes/s", lambda r: r["publish_rate_achieved"], "higher"),
            ("deliveries/s", lambda r: r["deliveries_per_s"], "higher"),
            ("latency p50 (ms)", lambda r: r["latency_p50_ms"], "lower"),
            ("latency p99 (ms)", lambda r: r["latency_p99_ms"], "lower"),
            ("slow-subscriber disconnects", lambda r: r["slow_subscriber_disconnects"], None),
            ("loss", lambda r: r["loss"], None),
            ("expected deliveries", lambda r: r["expected_deliveries"], None),
            ("server CPU (s) / elapsed (s)", lambda r: f"{r['server_cpu_s']:.1f} / {r['elapsed_s']:.1f}", None),
            OTHERS,
            ("sse-load CPU (s) / elapsed (s)", lambda r: f"{r['load_cpu_s']:.1f} / {r['elapsed_s']:.1f}", None),
        ])
        self.commands("2")

    def flood_seconds(self):
        for rs in self.runs("2").values():
            for r in rs:
                if "flood" in r:
                    return r["flood"]["duration_s"]
        return None

    def s3(self):
        if "3" not in self.b.results:
            return
        sample = next((r for rs in self.runs("3").values() for r in rs if "failed" not in r), {})
        self.out(f"## 3. Latency: {fmt(sample.get('subscribers'))} subscribers on one topic, 20 publishes/s "
                 f"(4 publishers), {fmt(sample.get('duration_s'))} s")
        self.out()
        self.table("3", [
            ("connections established", lambda r: r["connections_established"], None),
            ("publishes/s achieved (of 20)", lambda r: r["publish_rate_achieved"], "higher"),
            ("deliveries/s", lambda r: r["deliveries_per_s"], "higher"),
            ("latency p50 (ms)", lambda r: r["latency_p50_ms"], "lower"),
            ("latency p90 (ms)", lambda r: r["latency_p90_ms"], "lower"),
            ("**latency p99 (ms)**", lambda r: r["latency_p99_ms"], "lower"),
            ("latency p99.9 (ms)", lambda r: r["latency_p999_ms"], "lower"),
            ("latency max (ms)", lambda r: r["latency_max_ms"], "lower"),
            ("**loss**", lambda r: r["loss"], None),
            ("expected deliveries", lambda r: r["expected_deliveries"], None),
            ("slow-subscriber disconnects", lambda r: r["slow_subscriber_disconnects"], None),
            ("server CPU (s) / elapsed (s)", lambda r: f"{r['server_cpu_s']:.1f} / {r['elapsed_s']:.1f}", None),
            OTHERS,
        ])
        self.commands("3")

    def s4(self):
        if "4" not in self.b.results:
            return
        sample = next((r for rs in self.runs("4").values() for r in rs if "failed" not in r), {})
        self.out(f"## 4. Many topics: {fmt(sample.get('topics'))} topics × 2 subscribers, 16 publishers "
                 f"round-robin over the topics, unpaced, {fmt(sample.get('duration_s'))} s")
        self.out()
        self.table("4", [
            ("**deliveries/s**", lambda r: r["deliveries_per_s"], "higher"),
            ("publishes/s", lambda r: r["publish_rate_achieved"], "higher"),
            ("latency p99 (ms)", lambda r: r["latency_p99_ms"], "lower"),
            ("loss", lambda r: r["loss"], None),
            ("server CPU (s) / elapsed (s)", lambda r: f"{r['server_cpu_s']:.1f} / {r['elapsed_s']:.1f}", None),
            OTHERS,
            ("sse-load CPU (s) / elapsed (s)", lambda r: f"{r['load_cpu_s']:.1f} / {r['elapsed_s']:.1f}", None),
        ])
        self.commands("4")

    def s5(self):
        if "5" not in self.b.results:
            return
        self.out("## 5. Publish only: keep-alive POSTs of 128 bytes over 100 topics, no subscribers")
        self.out()
        self.out("Two clients, the same for both servers: `sse-load` (16 publishers, one request in flight each) "
                 "and `wrk` (1 thread, 32 connections), each on CPU 1. When `sse-load`'s CPU nears its elapsed "
                 "time the tool, not the server, is the limit; `wrk` is the lighter client.")
        self.out()
        self.table("5", [
            ("**requests/s, wrk**", lambda r: r["wrk_rps"], "higher"),
            ("requests/s, sse-load", lambda r: r["publish_rate_achieved"], "higher"),
            ("ack p50 / p99 (ms), sse-load", lambda r: f"{fmt(r['publish_ack_p50_ms'])} / {fmt(r['publish_ack_p99_ms'])}",
             None),
            ("failed publishes, sse-load", lambda r: r["publishes_failed"], None),
            ("non-2xx, wrk", lambda r: r["wrk_non2xx"] or 0, None),
            ("server CPU (s), sse-load / wrk", lambda r: f"{r['server_cpu_s']:.1f} / {fmt(r.get('wrk_server_cpu_s'))}",
             None),
            ("sse-load CPU (s) / elapsed (s)", lambda r: f"{r['load_cpu_s']:.1f} / {r['elapsed_s']:.1f}", None),
            ("other processes on CPU 0 / CPU 1 (%), sse-load ; wrk",
             lambda r: f"{r['others_cpu0_pct']} / {r['others_cpu1_pct']} ; "
                       f"{r.get('wrk_others_cpu0_pct', '–')} / {r.get('wrk_others_cpu1_pct', '–')}", None),
        ])
        self.commands("5")

    def s6(self):
        if "6" in self.b.results:
            self.out(f"## 6. State under a stalled reader: 1 `/state` subscriber that stops reading while "
                     f"{fmt(self.b.stall_target)} values are published (4 publishers, unpaced, at most "
                     f"{self.b.stall_cap} s)")
            self.out()
            self.out("The reader reads its head (and current value), then nothing until publishing ends; then it "
                     "reads again until it has the newest value (at most 120 s). *Server RSS growth* is the "
                     "peak during the run minus the RSS before it. Kernel socket buffers (client and server "
                     "side, several MB) absorb the first values on both systems and are not in RSS.")
            self.out()
            self.table("6", [
                ("publishes acked", lambda r: r["publishes_acked"], "higher"),
                ("publishing time (s)", lambda r: r["publish_s"], None),
                ("publishes/s", lambda r: r["publish_rate_achieved"], "higher"),
                ("server RSS before (MiB)", lambda r: r["rss_before_kib"] / 1024, None),
                ("server RSS peak (MiB)", lambda r: r["rss_peak_kib"] / 1024, None),
                ("**server RSS growth (MiB)**", lambda r: (r["rss_peak_kib"] - r["rss_before_kib"]) / 1024, "lower"),
                ("growth per publish (bytes)", lambda r: r["growth_per_publish_b"], None),
                ("values the reader received", lambda r: r["events_received"], None),
                ("**reader ended on the newest value**", lambda r: r["on_latest"], None),
                ("server CPU (s) / elapsed (s)", lambda r: f"{r['server_cpu_s']:.1f} / {r['elapsed_s']:.1f}", None),
                OTHERS,
            ])
            self.commands("6")
        if "6b" in self.b.results:
            self.out(f"## 6b. Memory when publishing to topics nobody subscribes to (`/events`)")
            self.out()
            self.out(f"First {fmt(self.b.fill)} publishes over {self.b.nobody_topics} topics (fills both systems' "
                     "256-event windows: "
                     f"the gateway's replay window, Nchan's message buffer), then {fmt(self.b.rest)} more to the "
                     f"same topics: *bounded* means the second part adds nothing. Then, on a fresh server, "
                     f"{fmt(self.b.distinct)} publishes to as many distinct topics (memory per topic created).")
            self.out()
            self.table("6b", [
                ("server RSS before (MiB)", lambda r: r["rss_before_kib"] / 1024, None),
                (f"RSS after {fmt(self.b.fill)} publishes (MiB)", lambda r: r["rss_after_fill_kib"] / 1024, None),
                (f"RSS after {fmt(self.b.fill + self.b.rest)} publishes (MiB)",
                 lambda r: r["rss_after_rest_kib"] / 1024, None),
                ("**growth per publish once windows are full (bytes)**",
                 lambda r: r["growth_per_publish_after_fill_b"], "lower"),
                ("growth per publish overall (bytes)", lambda r: r["growth_per_publish_b"], "lower"),
                ("growth per distinct topic (bytes)", lambda r: r["distinct_growth_per_topic_b"], "lower"),
            ])
            self.commands("6b")

    def s7(self):
        self.out("## 7. TLS hold")
        self.out()
        if "7" not in self.b.results:
            self.commands("7")
            return
        self.out("10,000 HTTPS `/events` subscribers held by `bench/tls_hold.py` (Python `ssl`: `sse-load` speaks "
                 "plain HTTP only for now); Nchan terminates TLS in nginx itself (`listen … ssl`).")
        self.out()
        self.table("7", [
            ("established", lambda r: r["established"], None),
            ("failed", lambda r: r["connections_failed"], None),
            ("connect time (s)", lambda r: r["connect_s"], "lower"),
            ("**bytes per idle TLS subscriber**", lambda r: r["bytes_per_connection"], "lower"),
            ("ended early", lambda r: r["ended_early"], None),
            OTHERS,
        ])
        self.commands("7")


# A table row: how much other processes ran on the two CPUs during a run (see Interference).
OTHERS = ("other processes on CPU 0 / CPU 1 (% of the run)",
          lambda r: f"{r['others_cpu0_pct']} / {r['others_cpu1_pct']}", None)


def share(cpu, r):
    """CPU seconds as a share of a run's elapsed time."""
    return f"{100 * cpu / r['elapsed_s']:.0f} %" if r.get("elapsed_s") else "–"


def highest_held(r, rates):
    best = 0
    for step in r["steps"]:
        if not step["held"]:
            break
        best = step["rate"]
    return best


def held_step(r, rates):
    best = None
    for step in r["steps"]:
        if not step["held"]:
            break
        best = step
    if best is None:
        raise KeyError("no step held")
    return best


class Targets:
    """The issue-5 targets, judged from this run's figures."""

    def __init__(self, bench):
        self.b = bench

    def means(self, scenario, getter):
        out = {}
        for system, runs in self.b.results.get(scenario, {}).items():
            values = []
            for r in runs:
                if "failed" in r:
                    continue
                try:
                    values.append(getter(r))
                except (KeyError, TypeError):
                    pass
            out[system] = mean(values)
        return out

    def lines(self):
        b, out = self.b, []
        if b.quick:
            out.append("Quick run: the figures are too small to judge the targets; "
                       + ("**gateway errors or loss: " + "; ".join(b.failures) + "**" if b.failures
                          else "no gateway errors and no loss."))
            return out
        out.append("| target | gateway | Nchan | verdict |")
        out.append("|---|---|---|---|")

        def row(target, g, n, verdict):
            out.append(f"| {target} | {g} | {n} | {verdict} |")

        m = self.means("1", lambda r: r["bytes_per_connection"])
        if m.get("gateway") is not None:
            g, n = m["gateway"], m.get("nchan")
            ok = n is not None and g <= n
            row("idle subscriber memory ≤ Nchan's, aiming for 4 KB", f"{g:,.0f} B", fmt(n and round(n)) + " B",
                ("met" if ok else "**missed**") + (f" ({g / n:.2f}× Nchan" if n else " (")
                + f"; {'within' if g <= 4096 else 'above'} the 4 KB aim)")
        m = self.means("1b", lambda r: r["connections_established"])
        if m.get("gateway") is not None:
            f = self.means("1b", lambda r: r["connections_failed"])
            row("hold 19,000 concurrent subscribers in one process", f"{m['gateway']:,.0f} held, "
                f"{f['gateway']:,.0f} failed", fmt(m.get("nchan") and round(m["nchan"])) + " held",
                "met" if m["gateway"] >= 19_000 else "**missed**")
        rates = getattr(b, "stepped", [])
        m = self.means("2", lambda r: highest_held(r, rates))
        if m.get("gateway") is not None and m.get("nchan") is not None:
            g, n = m["gateway"], m["nchan"]
            x = g / n if n else float("inf")
            row("scenario 2: highest rate held ≥ 1.5× Nchan's, aiming for 3×", f"{g:,.1f}/s", f"{n:,.1f}/s",
                f"{'met' if x >= 1.5 else '**missed**'} ({x:.2f}×{'; 3× aim met' if x >= 3 else ''})"
                if n else "Nchan held no step")
        m3 = self.means("3", lambda r: r["publish_rate_achieved"])
        if m3.get("gateway") is not None:
            runs = [r for r in b.results["3"]["gateway"] if "failed" not in r]
            ok = all(r["publish_rate_achieved"] >= 19 and r["loss"] == 0 and r["latency_p99_ms"] is not None
                     and r["latency_p99_ms"] < 100 and r["connections_established"] == r["subscribers"]
                     for r in runs) and runs
            p99 = mean([r["latency_p99_ms"] for r in runs])
            loss = sum(r["loss"] or 0 for r in runs)
            nruns = [r for r in b.results["3"].get("nchan", []) if "failed" not in r]
            row("scenario 3: 20/s to 10,000 subscribers, p99 < 100 ms, zero loss",
                f"{m3['gateway']:.1f}/s, p99 {fmt(p99)} ms, loss {loss:,}",
                f"{fmt(m3.get('nchan'))}/s, p99 {fmt(mean([r['latency_p99_ms'] for r in nruns]))} ms" if nruns else "–",
                "met" if ok else "**missed**")
        for scenario, label, getter in (("4", "many topics: deliveries/s ≥ Nchan's", lambda r: r["deliveries_per_s"]),
                                         ("5", "publish only: requests/s ≥ Nchan's (wrk)", lambda r: r["wrk_rps"]),
                                         ("5", "publish only: requests/s ≥ Nchan's (sse-load)",
                                          lambda r: r["publish_rate_achieved"])):
            m = self.means(scenario, getter)
            if m.get("gateway") is not None and m.get("nchan"):
                x = m["gateway"] / m["nchan"]
                row(label, f"{m['gateway']:,.0f}", f"{m['nchan']:,.0f}",
                    f"{'met' if x >= 1 else '**missed**'} ({x:.2f}×)")
        m = self.means("6b", lambda r: r["growth_per_publish_after_fill_b"])
        if m.get("gateway") is not None:
            g = m["gateway"]
            row("memory bounded by the replay windows when nobody subscribes (growth per publish once full)",
                f"{g:,.1f} B", fmt(m.get("nchan")) + " B", "met" if g < 50 else "**missed**")
        m = self.means("6", lambda r: (r["rss_peak_kib"] - r["rss_before_kib"]) / 1024)
        if m.get("gateway") is not None:
            runs = [r for r in b.results["6"]["gateway"] if "failed" not in r]
            latest = all(r["on_latest"] for r in runs) and runs
            nr = [r for r in b.results["6"].get("nchan", []) if "failed" not in r]
            row("scenario 6: memory flat under a stalled reader, reader ends on the newest value",
                f"+{m['gateway']:.1f} MiB over {mean([r['publishes_acked'] for r in runs]):,.0f} publishes; "
                f"on newest: {'yes' if latest else 'no'}",
                (f"+{m['nchan']:.1f} MiB over {mean([r['publishes_acked'] for r in nr]):,.0f} publishes; on newest: "
                 f"{'yes' if all(r['on_latest'] for r in nr) else 'no'}") if nr else "–",
                "met" if latest and m["gateway"] < 4 else "**missed**")
        if "7" not in b.results:
            row("TLS hold: memory per HTTPS subscriber", "not measured", "–", "; ".join(b.notes.get("7", [])))
        else:
            m = self.means("7", lambda r: r["bytes_per_connection"])
            row("TLS hold: memory per HTTPS subscriber (no target figure)", fmt(m.get("gateway")) + " B",
                fmt(m.get("nchan")) + " B", "measured")
        return out


def proc_meminfo_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return 0.0


def first_line(command):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        return ((done.stdout or "") + (done.stderr or "")).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "?"


def wait_for_quiet(minutes, threshold):
    """Polls the 1-minute load average every 30 s, at most `minutes`; returns a note for the report."""
    start = time.monotonic()
    while True:
        load = os.getloadavg()[0]
        waited = (time.monotonic() - start) / 60
        if load < threshold:
            return f"waited {waited:.0f} min for the 1-min load average to drop below {threshold} (it was {load:.2f})"
        if waited >= minutes:
            return (f"**the machine never got quiet**: after waiting {waited:.0f} min the 1-min load average was "
                    f"still {load:.2f} (other engineers building); ran anyway, so figures are noisy")
        log(f"load average {load:.2f} ≥ {threshold}; waiting (at most {minutes} min)")
        time.sleep(30)


def main():
    ap = argparse.ArgumentParser(description="The gateway side by side with nginx + Nchan (issue 5).")
    ap.add_argument("--quick", action="store_true", help="a tiny version of every scenario (CI smoke test)")
    ap.add_argument("--runs", type=int, help="runs of each scenario (default 2, 1 with --quick)")
    ap.add_argument("--scenarios", default="1,2,3,4,5,6,7", help="which scenarios, e.g. 2,3")
    ap.add_argument("--systems", default="nchan,gateway", help="nchan,gateway (or just one of them)")
    ap.add_argument("--out", help="report path (default bench/RESULTS.md; /tmp/streams-RESULTS-quick.md with --quick)")
    ap.add_argument("--wait-quiet", type=float, default=0, metavar="MINUTES",
                    help="first wait up to MINUTES for the 1-min load average to drop below --quiet-load")
    ap.add_argument("--quiet-load", type=float, default=1.5)
    ap.add_argument("--keep-temp", action="store_true", help="keep the temp dir (server configs and logs)")
    args = ap.parse_args()
    args.argv = sys.argv[1:]
    args.runs = args.runs or (1 if args.quick else 2)
    args.systems = [s for s in args.systems.split(",") if s in SYSTEMS]
    wanted = set(args.scenarios.split(","))
    for binary in (GATEWAY, LOAD):
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary} is missing: run bench/compare.sh (it builds both)")
    if os.cpu_count() < 2:
        sys.exit("needs at least 2 CPUs (server on CPU 0, load on CPU 1)")

    bench = Bench(args)
    bench.quiet_note = wait_for_quiet(args.wait_quiet, args.quiet_load) if args.wait_quiet > 0 else None
    out = args.out or (os.path.join(tempfile.gettempdir(), "streams-RESULTS-quick.md") if args.quick
                       else os.path.join(BENCH, "RESULTS.md"))
    started = datetime.datetime.now(datetime.timezone.utc)
    log(f"temp dir {bench.tmp}; report to {out}")
    try:
        for number in "1234567":
            if number in wanted:
                getattr(bench, f"scenario_{number}")()
    finally:
        finished = datetime.datetime.now(datetime.timezone.utc)
        bench.write(out, started, finished)
        if not args.keep_temp:
            shutil.rmtree(bench.tmp, ignore_errors=True)
    if bench.failures:
        log("gateway errors or loss:")
        for failure in bench.failures:
            log("  " + failure)
    if args.quick:
        print(open(out).read() if os.path.exists(out) else "", end="")
        return 1 if bench.failures else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
