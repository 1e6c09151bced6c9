"""Issue 5's, issue 16's and issue 17's targets, checked against the runs (the report's target sections)."""
import shutil
from .common import LABEL
from .figures import fmt, highest_held, mean

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
        if "gateway" not in b.args.systems:
            return out
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


class Issue16Targets:
    """Issue 16's targets: the gateway against the bare C server (bench/limit/limit.c) measured in the same
    run, and against Nchan for publish-only. Run #i of the gateway is judged against run #i of the others
    (the same round of the alternation, so the same state of a shared machine); every run must meet it."""

    IDLE_BYTES = 4_500  # "≤ 4.5 KB" (the issue's KB are 1,000 bytes: Nchan's 10,281 B is its "10.3 KB")

    def __init__(self, bench):
        self.b = bench

    def runs(self, scenario, system):
        return self.b.results.get(scenario, {}).get(system, [])

    @staticmethod
    def value(r, getter):
        if r is None or "failed" in r:
            return None
        try:
            return getter(r)
        except (KeyError, TypeError, ZeroDivisionError):
            return None

    def lines(self):
        b = self.b
        rows = []
        if "gateway" not in b.args.systems:
            return []
        count = max((len(rs) for sc in ("1", "2", "3", "4", "5") for rs in b.results.get(sc, {}).values()),
                    default=0)
        if not count:
            return []

        def pair(scenario, other, getter):
            """Per run: (gateway value, other's value) for runs 1 … count."""
            g, o = self.runs(scenario, "gateway"), self.runs(scenario, other)
            return [(self.value(g[i] if i < len(g) else None, getter),
                     self.value(o[i] if i < len(o) else None, getter)) for i in range(count)]

        def verdict(ok):
            return "met" if ok else "**missed**"

        def ratio_row(target, scenario, other, getter, unit, limit, higher, extra=None):
            """limit None: a figure for reference, no verdict."""
            cells, xs, verdicts, unjudged = [], [], [], 0
            for i, (g, o) in enumerate(pair(scenario, other, getter)):
                if g is None or not o:
                    if i >= max(len(self.runs(scenario, "gateway")), len(self.runs(scenario, other))):
                        cells.append("–")
                        continue
                    unjudged += 1
                    why = ("no gateway figure" if g is None else f"no {LABEL[other]} figure" if o is None
                           else f"{LABEL[other]} held no step" if scenario == "2" else f"{LABEL[other]}'s figure is 0")
                    cells.append(f"– ({why}): not judged")
                    continue
                x = g / o
                if limit is None:
                    xs.append(x)
                    cells.append(f"{fmt(g)}{unit} ÷ {fmt(o)}{unit} = {x:.2f}×")
                    continue
                ok = x >= limit if higher else x <= limit
                note = extra(i) if extra else None
                if note:
                    ok = ok and note[0]
                xs.append(x)
                verdicts.append(ok)
                cells.append(f"{fmt(g)}{unit} ÷ {fmt(o)}{unit} = {x:.2f}×" + (f", {note[1]}" if note else "")
                             + f": {verdict(ok)}")
            if limit is None:
                rows.append((target, cells, f"mean ratio {mean(xs):.2f}×" if xs else "not measured"))
                return
            overall = (f"{verdict(all(verdicts))} in {sum(verdicts)} of {len(verdicts)} run"
                       f"{'s' if len(verdicts) != 1 else ''}; mean ratio {mean(xs):.2f}×" if verdicts
                       else "not measured")
            if unjudged:
                overall = f"**not judged in every run** ({unjudged} not); " + overall
            rows.append((target, cells, overall))

        if "3" in b.results:
            runs3 = self.runs("3", "gateway")

            def clean(i):
                r = runs3[i] if i < len(runs3) else None
                if r is None or "failed" in r:
                    return (False, "run failed")
                ok = (r["loss"] == 0 and r["connections_established"] == r["subscribers"]
                      and r["publish_rate_achieved"] >= 0.95 * r["rate"])
                return (ok, f"loss {fmt(r['loss'])}, {fmt(r['publish_rate_achieved'])}/s")
            ratio_row("scenario 3: gateway p99 ≤ 1.25× the C server's, 0 loss (and ≥ 95 % of the 20/s), every run",
                      "3", "limit", lambda r: r["latency_p99_ms"], " ms", 1.25, False, clean)
        if "2" in b.results:
            rates = getattr(b, "stepped", [])
            ratio_row("scenario 2: gateway's highest rate held ≥ 0.8× the C server's",
                      "2", "limit", lambda r: highest_held(r, rates), "/s", 0.8, True)
            if rates:
                top = [i + 1 for i, (g, o) in enumerate(pair("2", "limit", lambda r: highest_held(r, rates)))
                       if o == rates[-1]]
                if top:
                    self.capped = (f"the bare C server held the highest step asked ({rates[-1]}/s) in run"
                                   f"{'s' if len(top) > 1 else ''} {', '.join(f'#{n}' for n in top)}: "
                                   "its real ceiling is higher, so that ratio flatters the gateway.")
        if "4" in b.results:
            ratio_row("scenario 4: gateway deliveries/s ≥ 0.7× the C server's",
                      "4", "limit", lambda r: r["deliveries_per_s"], "/s", 0.7, True)
        if "5" in b.results:
            have_wrk = any(self.value(r, lambda r: r["wrk_rps"]) for r in self.runs("5", "gateway"))
            key, tool = ("wrk_rps", "wrk") if have_wrk else ("publish_rate_achieved", "sse-load; wrk missing")
            ratio_row(f"scenario 5: gateway publish-only requests/s ≥ 1.0× Nchan's ({tool})",
                      "5", "nchan", lambda r: r[key], "/s", 1.0, True)
            ratio_row(f"scenario 5, for reference (no target): gateway ÷ the C server ({tool})",
                      "5", "limit", lambda r: r[key], "/s", None, True)
        if "1" in b.results:
            g = self.runs("1", "gateway")
            cells, verdicts = [], []
            for i in range(count):
                r = g[i] if i < len(g) else None
                v = self.value(r, lambda r: r["bytes_per_connection"])
                if v is None:
                    cells.append("– (no gateway figure)" if r is not None else "–")
                    continue
                others = []
                for other in ("limit", "nchan"):
                    o = self.runs("1", other)
                    ov = self.value(o[i] if i < len(o) else None, lambda r: r["bytes_per_connection"])
                    if ov is not None:
                        others.append(f"{LABEL[other]} {fmt(ov)} B")
                ok = v <= self.IDLE_BYTES
                verdicts.append(ok)
                cells.append(f"{fmt(v)} B" + (f" ({', '.join(others)})" if others else "") + f": {verdict(ok)}")
            rows.append((f"idle `/events` subscriber (scenario 1): gateway ≤ {self.IDLE_BYTES:,} bytes",
                         cells, f"{verdict(all(verdicts))} in {sum(verdicts)} of {len(verdicts)} run"
                                f"{'s' if len(verdicts) != 1 else ''}" if verdicts else "not measured"))
        if not rows:
            return []
        out = []
        if b.quick:
            out.append("Quick run: the figures are far too small to judge the targets; the verdicts below only "
                       "show that every column was measured and the report renders.")
            out.append("")
        out.append("Each cell: gateway ÷ the other server, the figures of run #i of each (the same round of "
                   "the alternation). A target must be met in every run.")
        out.append("")
        out.append("| target | " + " | ".join(f"run #{i + 1}" for i in range(count)) + " | over the runs |")
        out.append("|---|" + "---|" * (count + 1))
        for target, cells, overall in rows:
            cells = cells + ["–"] * (count - len(cells))
            out.append(f"| {target} | " + " | ".join(cells) + f" | {overall} |")
        if getattr(self, "capped", None):
            out.append("")
            out.append("Scenario 2: " + self.capped)
        if "limit" not in b.args.systems:
            out.append("")
            out.append("The bare C server was not among `--systems`: the ratios to it are not measured.")
        return out


class Issue17Targets:
    """Issue 17's targets: the gateway with `--loops 2` against itself with `--loops 1` and against Nchan with
    2 workers, all free to use both cores, in one run. Each ratio is given per run (run #i against run #i, the
    same round of the alternation) and of the means; the verdict is "met" only when met in every run."""

    # (scenario, what, getter, [(other system, minimum ratio)]); the getters take a run's result.
    TARGETS = (
        ("5", "publish-only requests/s ({tool})", None,
         [("gateway-loops1", 1.3), ("nchan2", 1.0)]),
        ("2", "1 topic × 1,000 subscribers: highest rate held (publishes/s)", None, [("nchan2", 1.0)]),
        ("4", "2,000 topics × 2 subscribers: deliveries/s", lambda r: r["deliveries_per_s"],
         [("gateway-loops1", 1.3), ("nchan2", 1.0)]),
    )
    TOP = "gateway-loops2"

    def __init__(self, bench):
        self.b = bench

    def runs(self, scenario, system):
        return self.b.results.get(scenario, {}).get(system, [])

    def getter(self, scenario, getter):
        if scenario == "2":
            rates = getattr(self.b, "stepped", [])
            return lambda r: highest_held(r, rates)
        if scenario == "5":
            key = "wrk_rps" if self.have_wrk() else "publish_rate_achieved"
            return lambda r: r[key]
        return getter

    def have_wrk(self):
        """wrk's figures when any run has one; with no figure at all, whether wrk is installed."""
        runs = [r for rs in self.b.results.get("5", {}).values() for r in rs if "failed" not in r]
        if runs:
            return any(r.get("wrk_rps") for r in runs)
        return bool(shutil.which("wrk"))

    def rows(self):
        """[(target, scenario, other, minimum, per-run (top, other) figures, mean ratio, verdict)]"""
        out = []
        for scenario, what, getter, others in self.TARGETS:
            if scenario not in self.b.results:
                continue
            get = self.getter(scenario, getter)
            what = what.format(tool="wrk" if self.have_wrk() else "sse-load; wrk missing")
            top = [Issue16Targets.value(r, get) for r in self.runs(scenario, self.TOP)]
            for other, minimum in others:
                if other not in self.b.args.systems or self.TOP not in self.b.args.systems:
                    continue
                theirs = [Issue16Targets.value(r, get) for r in self.runs(scenario, other)]
                pairs = [(top[i] if i < len(top) else None, theirs[i] if i < len(theirs) else None)
                         for i in range(max(len(top), len(theirs)))]
                judged = [(g, o) for g, o in pairs if g is not None and o]
                tm, om = mean([g for g, _ in pairs]), mean([o for _, o in pairs])
                ratio = tm / om if tm is not None and om else None
                ok = bool(judged) and len(judged) == len(pairs) and all(g / o >= minimum for g, o in judged)
                out.append({"target": f"{what}: {LABEL[self.TOP]} ≥ {minimum:g}× {LABEL[other]}",
                            "scenario": scenario, "other": other, "minimum": minimum, "runs": pairs,
                            "top_mean": tm, "other_mean": om, "ratio_of_means": ratio,
                            "verdict": "met" if ok else "missed",
                            "runs_met": sum(1 for g, o in judged if g / o >= minimum), "runs_count": len(pairs)})
        return out

    def lines(self):
        rows = self.rows()
        if not rows:
            return []
        out = []
        if self.b.quick:
            out.append("Quick run: the figures are far too small to judge the targets; the verdicts below only "
                       "show that every column was measured and the report renders.")
            out.append("")
        out.append("Per run: `--loops 2`'s figure ÷ the other's, of the same round of the alternation. "
                   "**met** only when the ratio reaches the target in every run; the ratio of the means is "
                   "given beside it. Servers and load are free to use both cores (no `taskset`).")
        out.append("")
        out.append("| target | --loops 2 (mean) | other (mean) | ratio of means | per run | verdict |")
        out.append("|---|---|---|---|---|---|")
        for row in rows:
            per = ", ".join(f"#{i + 1}: " + (f"{fmt(g)} ÷ {fmt(o)} = {g / o:.2f}×" if g is not None and o
                                              else "not judged")
                            for i, (g, o) in enumerate(row["runs"]))
            verdict = row["verdict"] if row["verdict"] == "met" else "**missed**"
            out.append(f"| {row['target']} | {fmt(row['top_mean'])} | {fmt(row['other_mean'])} | "
                       f"{(format(row['ratio_of_means'], '.2f') + '×') if row['ratio_of_means'] else '–'} | "
                       f"{per} ({row['runs_met']} of {row['runs_count']} met) | {verdict} |")
        rates = getattr(self.b, "stepped", [])
        capped = [LABEL[s] for s in (self.TOP, "nchan2", "gateway-loops1")
                  if any(Issue16Targets.value(r, self.getter("2", None)) == rates[-1] for r in self.runs("2", s))]
        if rates and capped:
            out.append("")
            out.append(f"Scenario 2: {', '.join(capped)} held the highest step asked ({rates[-1]}/s) in some run: "
                       "its real ceiling is higher.")
        return out
