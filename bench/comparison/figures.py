"""Small figures the report and the targets share: held rates, rounding, means, CPU shares."""

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


def others(r, prefix=""):
    """Other processes' CPU during a run (see Interference): "CPU 0 / CPU 1" percentages for a pinned
    server, one figure over both CPUs for a free one (issue 17's systems)."""
    if prefix + "others_pct" in r:
        return f"{r[prefix + 'others_pct']} (all CPUs)"
    return f"{r.get(prefix + 'others_cpu0_pct', '–')} / {r.get(prefix + 'others_cpu1_pct', '–')}"


# A table row: how much other processes ran on the two CPUs during a run (see Interference).
OTHERS = ("other processes on CPU 0 / CPU 1 (% of the run; for a free server, all CPUs, 100 % = a core)",
          lambda r: others(r), None)


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
