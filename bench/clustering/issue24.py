"""Issue 24's side-by-side table: one gateway in memory, one on Redis, two on one Redis, two nginx + Nchan on
one Redis, on the four scenarios, with the two ratios the issue's targets are about and a verdict for each.

Targets (issue 24, "Measured"):
  - one gateway on Redis >= 0.8x the same gateway in memory on fan-out: the highest rate held (a), and
    10,000 subscribers x 20/s delivered in full (b: >= 95 % of the 20/s achieved, 0 loss, everyone connected);
  - two gateways >= 2x Nchan's two nodes on every scenario: (a) highest rate held, (b) publishes/s achieved
    (when Nchan already achieves the full 20/s no rate can be twice it: then p99 <= 0.5x Nchan's instead),
    (c) deliveries/s, (d) publishes/s;
  - the publish round trip p99 under fan-out load <= 2x in-memory mode's: sse-load's publish_ack_p99_ms
    during (a), at the highest rate both the in-memory and the on-Redis gateway held (the same offered load).
Ratios are of the means over the runs (one run by default)."""
from comparison.figures import fmt, mean

from clustering.common import LABEL_ISSUE24

ORDER = ("single", "redis", "cluster", "nchan")


class Issue24:
    def __init__(self, bench):
        self.b = bench

    # --- figures per system (means over the runs that did not fail) -------------------------

    def runs(self, scenario, kind):
        return self.b.runs(scenario, kind)

    def held(self, kind):
        """(a) highest rate held, mean over the runs; None without a run."""
        runs = self.runs("a", kind)
        return mean([(self.b.highest(r) or {}).get("rate", 0) for r in runs]) if runs else None

    def at_rate(self, kind, rate, key):
        """(a) `key` of the step at `rate`, mean over the runs that ran that step."""
        steps = [next((s for s in r["steps"] if s["rate"] == rate), None) for r in self.runs("a", kind)]
        return mean([s.get(key) for s in steps if s is not None])

    def common_rate(self):
        """The highest rate every run of the in-memory and the on-Redis gateway held (same offered load)."""
        rates = [(self.b.highest(r) or {}).get("rate", 0) for k in ("single", "redis") for r in self.runs("a", k)]
        return min(rates) if rates and min(rates) > 0 else None

    def figure(self, scenario, kind, key):
        return mean([r.get(key) for r in self.runs(scenario, kind)])

    def full(self, kind):
        """(b) delivered in full in every run: >= 95 % of 20/s, 0 loss, every subscriber connected."""
        runs = self.runs("b", kind)
        return bool(runs) and all(r["publish_rate_achieved"] >= 0.95 * r["rate"] and r["loss"] == 0
                                  and r["connections_established"] == r["subscribers"] for r in runs)

    # --- the table --------------------------------------------------------------------------

    @staticmethod
    def ratio(x, y):
        return x / y if x is not None and y else None

    @staticmethod
    def judge(value, limit, higher=True):
        if value is None:
            return "not measured"
        ok = value >= limit if higher else value <= limit
        return f"{'met' if ok else '**missed**'} ({value:.2f}×)"

    def rows(self):
        """[(figure, {system: text}, redis ÷ memory, cluster ÷ nchan, target, verdict)]"""
        out = []

        def values(get):
            return {k: get(k) for k in ORDER}

        held = values(self.held)
        out.append(("(a) 1 topic × 1,000 subscribers: highest rate held, publishes/s", held,
                    self.ratio(held["redis"], held["single"]), self.ratio(held["cluster"], held["nchan"]),
                    "on Redis ≥ 0.8× in memory; 2 gateways ≥ 2× 2 Nchan",
                    "; ".join([self.judge(self.ratio(held["redis"], held["single"]), 0.8),
                               self.judge(self.ratio(held["cluster"], held["nchan"]), 2)])))
        p99 = values(lambda k: self.at_rate(k, 100, "latency_p99_ms"))
        out.append(("(a) delivery p99 at 100/s, ms", p99, self.ratio(p99["redis"], p99["single"]),
                    self.ratio(p99["cluster"], p99["nchan"]), "–", "for reference"))
        rate = self.common_rate()
        if rate:
            rtt = values(lambda k: self.at_rate(k, rate, "publish_ack_p99_ms"))
            x = self.ratio(rtt["redis"], rtt["single"])
            out.append((f"(a) publish round trip p99 at {rate}/s (the highest rate both single gateways held), ms",
                        rtt, x, self.ratio(rtt["cluster"], rtt["nchan"]), "on Redis ≤ 2× in memory",
                        self.judge(x, 2, higher=False)))
        else:
            out.append(("(a) publish round trip p99 under fan-out load, ms", {}, None, None,
                        "on Redis ≤ 2× in memory", "not measured (no rate held by both single gateways)"))
        achieved = values(lambda k: self.figure("b", k, "publish_rate_achieved"))
        b99 = values(lambda k: self.figure("b", k, "latency_p99_ms"))
        loss = values(lambda k: self.figure("b", k, "loss"))
        texts = {k: None if achieved[k] is None else f"{fmt(achieved[k])}/s, loss {fmt(loss[k])}, p99 {fmt(b99[k])} ms"
                 for k in ORDER}
        if self.runs("b", "redis"):
            full = "met" if self.full("redis") else "**missed**"
            full += " (delivered in full)" if self.full("redis") else " (not delivered in full)"
        else:
            full = "not measured"
        if self.full("nchan") and self.full("cluster"):
            pair = "p99: " + self.judge(self.ratio(b99["cluster"], b99["nchan"]), 0.5, higher=False)
        else:
            pair = self.judge(self.ratio(achieved["cluster"], achieved["nchan"]), 2)
        out.append(("(b) 10,000 subscribers × 20/s: publishes/s achieved, loss, delivery p99", texts,
                    self.ratio(achieved["redis"], achieved["single"]), self.ratio(achieved["cluster"], achieved["nchan"]),
                    "on Redis delivered in full; 2 gateways ≥ 2× 2 Nchan (p99 ≤ 0.5× if both achieve 20/s)",
                    f"{full}; {pair}"))
        for scenario, title, key in (("c", "(c) 2,000 topics × 2 subscribers: deliveries/s", "deliveries_per_s"),
                                     ("d", "(d) publish only: publishes/s", "publish_rate_achieved")):
            v = values(lambda k: self.figure(scenario, k, key))
            x = self.ratio(v["cluster"], v["nchan"])
            out.append((title, v, self.ratio(v["redis"], v["single"]), x, "2 gateways ≥ 2× 2 Nchan", self.judge(x, 2)))
        cpu = values(lambda k: self.figure("d", k, "redis_cpu_us_per_publish"))
        out.append(("(d) Redis CPU per publish, µs (whole run)", cpu, None, self.ratio(cpu["cluster"], cpu["nchan"]),
                    "–", "for reference"))
        return out

    def lines(self):
        rows = self.rows()
        if not any(v for _, v, *_ in rows):
            return []
        kinds = [k for k in ORDER if k in self.b.args.systems]
        head = (["figure"] + [LABEL_ISSUE24[k] for k in kinds]
                + ["on Redis ÷ in memory", "2 gateways ÷ 2 Nchan", "target", "verdict"])
        out = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
        for title, values, x_memory, x_nchan, target, verdict in rows:
            cells = [title] + [v if isinstance(v, str) else fmt(v) for v in (values.get(k) for k in kinds)]
            cells += [f"{x_memory:.2f}×" if x_memory is not None else "–",
                      f"{x_nchan:.2f}×" if x_nchan is not None else "–", target, verdict]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
        out.append("Reconnect storm (issue 24's last measurement): `bench/reconnect-storm/`, not part of this run.")
        if self.b.quick:
            out.append("")
            out.append("Quick run: the figures are far too small to judge; the verdicts only show that every "
                       "column was measured and the table renders.")
        return out
