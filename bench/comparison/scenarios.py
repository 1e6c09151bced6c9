"""The seven scenarios (`Bench.scenario_1` … `scenario_7`), each run against every system asked for
(Nchan, the bare C server, the gateway) that can serve it."""
import json, os, resource, shlex, shutil, socket, subprocess, sys, tempfile, time
from .common import LOAD_CPU, BENCH, GATEWAY, Interference, LABEL, LOAD, SPEC, SYSTEMS, kind, limit_fds, log, taskset
from .figures import held
from .report import Report
from .targets import Issue17Targets
from .server import Sampler, Server

# Scenarios the bare C server (bench/limit/limit.c) cannot serve, and why: it is skipped there ("n/a").
LIMIT_NOT_APPLICABLE = {
    "6": "**Bare C server: n/a** — it keeps no current value for `/state` (served like `/events`) and drops "
         "a subscriber 1,024 frames behind, so a stalled `/state` reader cannot end on the newest value.",
    "6b": "**Bare C server: n/a** — it has no replay window (a publish nobody subscribes to is dropped), so "
          "there is no bounded-window memory to compare.",
    "7": "**Bare C server: n/a** — it has no TLS.",
}


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
        command = taskset(LOAD_CPU, server.system) + [LOAD, "--url", f"http://127.0.0.1:{server.port}"] + options + ["--json"]
        self.note_command(scenario, command, server.port)
        self.note_command(scenario, server.command, server.port)
        with Interference(server) as watch:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, preexec_fn=limit_fds)
        lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
        if done.returncode != 0 or not lines:
            raise RuntimeError(f"sse-load exited {done.returncode}: {done.stderr.strip()[-300:]}")
        result = json.loads(lines[-1])
        watch.finish(result, result["load_cpu_s"])
        tally = self.counts[server.system]
        tally[0] += result["publishes_acked"]
        tally[1] += result["subscriber_count_mismatches"]
        tally[2] += result["expected_deliveries"]
        tally[3] += result["server_counted_deliveries"] or 0
        return result

    def check(self, scenario, system, result, label, loss=True):
        """Records gateway errors and loss (the --quick failure conditions), for every gateway system."""
        if kind(system) != "gateway":
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

    def systems_for(self, scenario):
        """The systems asked for that can serve `scenario`; a note for the bare C server where it cannot."""
        systems = []
        for system in self.args.systems:
            if system == "limit" and scenario in LIMIT_NOT_APPLICABLE:
                note = LIMIT_NOT_APPLICABLE[scenario]
                if note not in self.notes.setdefault(scenario, []):
                    self.notes[scenario].append(note)
                    log(f"scenario {scenario}: " + note.replace("**", ""))
                continue
            systems.append(system)
        return systems

    def each(self, scenario, title, body):
        """Runs body(system, run) for every run and system, alternating systems, catching errors."""
        runs = self.args.runs
        systems = self.systems_for(scenario)
        self.loads.append((scenario, os.getloadavg()[0]))
        log(f"scenario {scenario}: {title} (load average {os.getloadavg()[0]:.2f})")
        store = self.results.setdefault(scenario, {s: [] for s in systems})
        for run in range(1, runs + 1):
            for system in systems:
                started = time.monotonic()
                try:
                    result = body(system, run)
                except Exception as error:  # noqa: BLE001 — recorded and reported
                    result = {"failed": f"{type(error).__name__}: {error}"}
                    log(f"  {system} run {run}: FAILED {error}")
                    if kind(system) == "gateway":
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
        if not self.quick and not getattr(self.args, "skip_1b", False):
            self.each("1b", "idle hold, 19,000 subscribers over 100 topics",
                      self.idle_hold("1b", 19_000, 100, 10, 19_000 / 5000))

    def scenario_2(self):
        if self.quick:
            subscribers, rates, step, flood = 50, [25, 50], 1, 1
        else:
            subscribers, rates, step, flood = 1000, [25, 50, 75, 100, 150, 200, 300, 400, 600, 800], 5, 10
        # Issue 17's set: only the highest rate held counts, so a server's steps end at its first step not
        # held (no higher step can count), and there is no flood; one more step (1,000/s) for two cores.
        issue17 = getattr(self.args, "issue17", False)
        if issue17 and not self.quick:
            rates = rates + [1000]
        self.stepped = rates
        self.step_early_stop = issue17

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
                    if issue17 and not r["held"]:
                        break
                if issue17:
                    return out
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
                    command = taskset(LOAD_CPU, system) + [wrk, "-t1", "-c32", f"-d{duration}s", "-s", script,
                               f"http://127.0.0.1:{server.port}"]
                    self.note_command("5", command, server.port)
                    wrk_usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                    with Interference(server) as watch:
                        done = subprocess.run(command, capture_output=True, text=True, timeout=duration + 60)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    w = {}
                    wrk_cpu = (after.ru_utime + after.ru_stime) - (wrk_usage.ru_utime + wrk_usage.ru_stime)
                    watch.finish(w, wrk_cpu)
                    r["wrk_server_cpu_s"], r["wrk_load_cpu_s"] = w["server_cpu_s"], round(wrk_cpu, 3)
                    for key in ("others_cpu0_pct", "others_cpu1_pct", "others_pct"):
                        if key in w:
                            r["wrk_" + key] = w[key]
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
                    if kind(system) == "gateway" and (r["wrk_non2xx"] or r["wrk_errors"]):
                        self.failures.append(f"scenario 5 ({system}, wrk, run {run}): non-2xx {r['wrk_non2xx']}, "
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
                if kind(system) == "gateway" and r["publishes_acked"] < publishes:
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
        if "limit" in self.args.systems:
            self.systems_for("7")  # the n/a note
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
                command = taskset(LOAD_CPU, system) + [sys.executable, os.path.join(BENCH, "tls_hold.py"),
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
                if kind(system) == "gateway" and (r["connections_failed"] or r["error"] or r["ended_early"]):
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
                       "systems": {s: SPEC[s] for s in self.args.systems},
                       "issue17_targets": Issue17Targets(self).rows(),
                       "results": self.results, "commands": self.commands, "notes": self.notes,
                       "failures": self.failures}, f, indent=1)
        log(f"wrote {path} and {raw}")
