"""Issue 5's targets, checked against the runs (the "missed targets" section)."""
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
