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

The code is in bench/clustering/, one part a module: common, processes, systems, scenarios, report.
"""
import argparse, datetime, json, os, shutil, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comparison.common import GATEWAY, LOAD, log, wait_for_quiet  # noqa: E402
from clustering import report  # noqa: E402
from clustering.common import BENCH, REDIS, SYSTEMS  # noqa: E402
from clustering.scenarios import Bench  # noqa: E402


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
        report.write(bench, out, started, datetime.datetime.now(datetime.timezone.utc), __doc__)
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
