#!/usr/bin/env python3
"""The gateway cluster side by side with an Nchan cluster on the same Redis (issues 12 and 24).
Run through bench/cluster.sh, which installs what is missing and builds first; see bench/README.md.

  bench/cluster.sh --issue24       issue 24's side-by-side run: the four systems below on scenarios a, b, c, d,
                                   one run each (~12 min); writes bench/RESULTS-issue24.md (.json) and prints
                                   the table of ratios against the issue's targets
  bench/cluster.sh                 issue 12's: cluster, nchan, single on a and b, two runs; bench/cluster.md

Four systems, each started fresh (a new redis-server too) for every run of every scenario:
  single   one sse-gateway without Redis (in memory: the baseline)
  redis    one sse-gateway with --redis on one redis-server
  cluster  two sse-gateway processes with --redis on one redis-server
  nchan    two nginx + Nchan instances (one worker each) with nchan_redis_pass on one redis-server
Every server and redis-server on CPU 0, the load (one sse-load, --url once per node) on CPU 1.
redis-server runs in a temp dir on a free port with --save "" --appendonly no: nothing is
written to disk during the bench (a production Redis would persist; that costs Redis CPU
which this bench does not count).

Scenarios:
  a  one topic x 1,000 subscribers split over the nodes, 4 publishers on the first node,
     stepped publish rate (5 s a step) until a step is not held (loss 0, p99 < 100 ms,
     >= 95 % of the rate, nobody cut): the highest rate held
     (and each step's publish round trip p99: sse-load's publish_ack_p99_ms)
  b  10,000 subscribers on one topic split over the nodes, 20 publishes/s for 10 s:
     achieved rate, loss, p99; p99 added over the single node
  c  2,000 topics x 2 subscribers (each topic on both nodes), 16 publishers spread over the nodes,
     unpaced, 10 s: deliveries/s
  d  publish only: 16 publishers spread over the nodes, 100 topics, no subscribers, 10 s: publishes/s
Redis CPU per publish in each: (used_cpu_sys + used_cpu_user) delta of INFO cpu over each
sse-load run / publishes acked. Also, from INFO sampled every 100 ms: the publishing phase alone
(the run also holds the subscribers' connects), and that less Redis's idle CPU (measured for 1 s
before each run, nodes connected)

The code is in bench/clustering/, one part a module: common, processes, systems, scenarios, report.
"""
import argparse, datetime, json, os, shutil, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comparison.common import GATEWAY, LOAD, log, wait_for_quiet  # noqa: E402
from clustering import report  # noqa: E402
from clustering.issue24 import Issue24  # noqa: E402
from clustering.common import BENCH, REDIS, SYSTEMS  # noqa: E402
from clustering.scenarios import Bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description="The gateway cluster side by side with an Nchan cluster (issue 12).")
    ap.add_argument("--quick", action="store_true", help="a tiny version of every scenario (smoke test)")
    ap.add_argument("--runs", type=int, help="runs of each scenario (default 2, 1 with --quick)")
    ap.add_argument("--issue24", action="store_true",
                    help="issue 24's run: systems single,redis,cluster,nchan, scenarios a,b,c,d, one run each, "
                         "bench/RESULTS-issue24.md; the table of its targets printed")
    ap.add_argument("--scenarios", help="some of a,b,c,d (default a,b; a,b,c,d with --issue24)")
    ap.add_argument("--systems", help="some of single,redis,cluster,nchan, in the run order wanted "
                                      "(default cluster,nchan,single; single,redis,cluster,nchan with --issue24)")
    ap.add_argument("--publish-to", default="first", choices=("first", "all"),
                    help="sse-load --publish-to: publishers on node 1 only (default) or spread over the nodes")
    ap.add_argument("--out", help="report path (default bench/cluster.md; /tmp/streams-cluster-quick.md with --quick)")
    ap.add_argument("--wait-quiet", type=float, default=0, metavar="MINUTES",
                    help="first wait up to MINUTES for the 1-min load average to drop below --quiet-load")
    ap.add_argument("--quiet-load", type=float, default=1.5)
    ap.add_argument("--keep-temp", action="store_true", help="keep the temp dir (configs and logs)")
    args = ap.parse_args()
    args.argv = sys.argv[1:]
    args.runs = args.runs or (1 if args.quick or args.issue24 else 2)
    args.scenarios = args.scenarios or ("a,b,c,d" if args.issue24 else "a,b")
    args.systems = args.systems or ("single,redis,cluster,nchan" if args.issue24 else "cluster,nchan,single")
    unknown = [s for s in args.systems.split(",") if s not in SYSTEMS]
    if unknown:
        sys.exit(f"unknown --systems {','.join(unknown)}: choose from {','.join(SYSTEMS)}")
    args.systems = args.systems.split(",")
    for binary in (GATEWAY, LOAD, REDIS):
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary} is missing: run bench/cluster.sh (it installs and builds)")
    if os.cpu_count() < 2:
        sys.exit("needs at least 2 CPUs (servers on CPU 0, load on CPU 1)")
    args.quiet_note = wait_for_quiet(args.wait_quiet, args.quiet_load) if args.wait_quiet > 0 else None
    bench = Bench(args)
    out = args.out or (os.path.join(tempfile.gettempdir(), "streams-cluster-quick.md") if args.quick
                       else os.path.join(BENCH, "RESULTS-issue24.md") if args.issue24
                       else os.path.join(BENCH, "cluster.md"))
    started = datetime.datetime.now(datetime.timezone.utc)
    log(f"temp dir {bench.tmp}; report to {out}")
    try:
        for scenario in ("a", "b", "c", "d"):
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
    if args.issue24:
        print("\n".join(Issue24(bench).lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
