"""bench/RESULTS.md: tables, ratios and notes written from the runs."""
import os, platform, shlex, shutil, time
from .common import LOAD_CPU, SERVER_CPU, BENCH, LABEL, RATIOS, ROOT, SPEC, SYSTEMS, first_line, pinned, proc_meminfo_gib
from .figures import fmt, mean, OTHERS, others, share, highest_held, held_step
from .targets import Issue16Targets, Issue17Targets, Targets


class Report:
    def __init__(self, bench):
        self.b = bench
        self.lines = []

    def out(self, text=""):
        self.lines.append(text)

    def runs(self, scenario):
        return self.b.results.get(scenario, {})

    def table(self, scenario, rows):
        """rows: (label, getter(run result) -> value, better: 'higher'|'lower'|None).
        Ratio columns, of the means of the runs (common.RATIOS whose both systems ran): gateway ÷ Nchan and
        gateway ÷ the bare C server; for issue 17's systems, --loops 2 ÷ Nchan (2 workers), --loops 2 ÷
        --loops 1 and --loops 1 ÷ Nchan (2 workers)."""
        data = self.runs(scenario)
        systems = [s for s in SYSTEMS if s in data]
        header = ["", *[f"{LABEL[s]} #{i + 1}" for s in systems for i in range(len(data[s]))]]
        ratios = [(a, b) for a, b in RATIOS if a in systems and b in systems]
        header += [f"{LABEL[a]} ÷ {LABEL[b]}" for a, b in ratios]
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
            for top, other in ratios:
                if better and means.get(other) and means.get(top) is not None:
                    x = means[top] / means[other]
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
        if getattr(b.args, "issue17", False):
            self.out("# Issue 17: the gateway with one and two event loops beside Nchan with two workers")
        else:
            self.out("# The gateway side by side with nginx + Nchan and the bare C server")
        self.out()
        spelled = {"nchan": "Nchan", "limit": "the bare C server (`bench/limit/limit.c`)", "gateway": "the gateway",
                   "nchan2": "Nchan with 2 workers", "gateway-loops1": "the gateway with `--loops 1`",
                   "gateway-loops2": "the gateway with `--loops 2`"}
        names = " and ".join(", ".join(spelled[s] for s in b.args.systems).rsplit(", ", 1))
        pins = [s for s in b.args.systems if pinned(s)]
        free = [s for s in b.args.systems if not pinned(s)]
        placement = []
        if pins:
            placement.append(f"{', '.join(LABEL[s] for s in pins)}: the server pinned to CPU {SERVER_CPU} "
                             f"(`taskset`; nginx with one worker, `daemon off`), the load pinned to CPU {LOAD_CPU}")
        if free:
            placement.append(f"{', '.join(LABEL[s] for s in free)}: server and load both free to use every "
                             f"core (no `taskset`; nginx with 2 workers, `daemon off`; the gateway's arguments "
                             + ", ".join(f"{LABEL[s]}: `{' '.join(SPEC[s]['args']) or '(none)'}`"
                                         for s in free if SPEC[s]["kind"] == "gateway") + ")")
        self.out(f"Written by `bench/compare.sh{' ' + shlex.join(b.args.argv) if b.args.argv else ''}` "
                 f"({'quick smoke run: tiny scenarios, not figures to quote' if b.quick else 'full run'}). "
                 f"Each scenario ran against {names} in turn, a fresh server each time; "
                 + "; ".join(placement) + "; the same `sse-load` for all; "
                 f"{b.args.runs} run{'s' if b.args.runs > 1 else ''} of each (#1, #2, … below), alternating systems. "
                 "Ratio columns are of the means of the runs ("
                 + ", ".join(f"{LABEL[x]} ÷ {LABEL[y]}" for x, y in RATIOS
                             if x in b.args.systems and y in b.args.systems)
                 + "); the issue-16 and issue-17 targets below compare run #i with run #i. Server memory is `VmRSS` of "
                 "`/proc/<pid>/status` (for nginx, the sum over its workers); server CPU is its user + system time "
                 "(all threads; for nginx, all workers) over the load run. See bench/README.md for what each "
                 "scenario does and how to read it.")
        self.out()
        self.machine(started, finished)
        self.issue17()
        self.issue16()
        self.summary()
        self.s1()
        self.s2()
        self.s3()
        self.s4()
        self.s5()
        self.s6()
        self.s7()
        if not getattr(b.args, "issue17", False):  # the soak is no part of issue 17's table
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
        if "limit" in b.args.systems:
            self.out(f"- bare C server: `bench/limit/limit.c` (a copy of `../shared/bench/limit.c`) built with "
                     f"`gcc -O2` ({first_line(['gcc', '--version'])}), run as `taskset -c {SERVER_CPU} limit $PORT`")
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

    def issue17(self):
        lines = Issue17Targets(self.b).lines()
        if lines:
            self.out("## Issue 17: the gateway with `--loops 2` against `--loops 1` and Nchan with 2 workers")
            self.out()
            for line in lines:
                self.out(line)
            self.out()

    def issue16(self):
        lines = Issue16Targets(self.b).lines()
        if lines:
            self.out("## Issue 16: the gateway against the bare C server (and Nchan), run by run")
            self.out()
            for line in lines:
                self.out(line)
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
                 "other processes' share of CPU 0 / CPU 1, or of all CPUs for a free server (the shared "
                 "machine's interference)"
                 + ("; – a step not run: a server's steps end at its first step not held (issue 17's set)"
                    if getattr(self.b, "step_early_stop", False) else "") + ":")
        self.out()
        systems = [s for s in SYSTEMS if s in data]
        header = ["asked/s"] + [f"{LABEL[s]} #{i + 1}" for s in systems for i in range(len(data[s]))]
        self.out("| " + " | ".join(header) + " |")
        self.out("|" + "---|" * len(header))
        for index, rate in enumerate(rates):
            cells = []
            for s in systems:
                for r in data[s]:
                    if "failed" in r:
                        cells.append("failed")
                        continue
                    if index >= len(r.get("steps", [])):
                        cells.append("–")
                        continue
                    st = r["steps"][index]
                    cells.append(f"{'✓' if st['held'] else '✗'} {fmt(st['publish_rate_achieved'])} · "
                                 f"{fmt(st['deliveries_per_s'])} · {fmt(st['latency_p99_ms'])} · {fmt(st['loss'])}"
                                 + (f" · {st['slow_subscriber_disconnects']} cut"
                                    if st["slow_subscriber_disconnects"] else "")
                                 + f" · {share(st['server_cpu_s'], st)} / {share(st['load_cpu_s'], st)}"
                                 + f" · {others(st)} %")
            self.out(f"| {rate} | " + " | ".join(cells) + " |")
        self.out()
        if self.flood_seconds() is None:
            self.commands("2")
            return
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
        self.out("Two clients, the same for every server: `sse-load` (16 publishers, one request in flight each) "
                 "and `wrk` (1 thread, 32 connections), each on CPU 1 (free, unpinned, for issue 17's systems). When `sse-load`'s CPU nears its elapsed "
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
            ("wrk CPU (s) (of its duration)", lambda r: r["wrk_load_cpu_s"], None),
            ("other processes on CPU 0 / CPU 1 (%; all CPUs for a free server), sse-load ; wrk",
             lambda r: f"{others(r)} ; {others(r, 'wrk_')}", None),
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
        if "7" not in self.b.results and "7" not in self.b.notes and "7" not in self.b.commands:
            return
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


