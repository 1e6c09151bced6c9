#!/usr/bin/env python3
"""The gateway side by side with nginx + Nchan (issue 5) and the bare C server (issue 16:
bench/limit/limit.c, what one core can do). Run through bench/compare.sh, which installs
what is missing and builds first; see bench/README.md.

Every scenario runs against Nchan, the bare C server and the gateway in turn (fresh server
each time), server on CPU 0, load on CPU 1, the same `sse-load` for all, at
least twice; the report goes to bench/RESULTS.md (or --out). Only 127.0.0.1 is
used; every wait is bounded; every server started is stopped by its pid. The bare C
server is skipped ("n/a") where it cannot serve a scenario (stalled /state, replay
windows, TLS).

  bench/compare.sh                 # full run, ~25 min, writes bench/RESULTS.md
  bench/compare.sh --quick         # seconds per scenario; exit 1 on errors or loss against the gateway
  bench/compare.sh --wait-quiet 40 # first wait (up to 40 min) for the 1-min load average to drop below 1.5
  bench/compare.sh --scenarios issue16   # only issue 16's table: 1 (idle bytes), 2, 3, 4, 5
  bench/compare.sh --scenarios issue17   # issue 17: Nchan (2 workers), gateway --loops 1 and --loops 2,
                                         # unpinned; scenarios 5 (wrk), 2 (stepped), 4 (many topics)

The code is in bench/comparison/, one part a module: common (paths, logging, /proc),
server (starting and stopping a server, sampling it), scenarios (the seven scenarios),
report (RESULTS.md), targets (issue 5's, issue 16's and issue 17's targets).
"""
import argparse, datetime, os, shlex, shutil, subprocess, sys, tempfile
from comparison.common import BENCH, GATEWAY, LIMIT, LIMIT_SOURCE, LOAD, SPEC, SYSTEMS, log, wait_for_quiet

# --scenarios issue16: the rows of issue 16's table (scenario 1 gives the idle bytes; 1b is left out).
ISSUE16 = "1,2,3,4,5"
# --scenarios issue17: publish-only (5), one topic × 1,000 subscribers stepped (2), 2,000 topics × 2 (4),
# against these systems unless --systems says otherwise (all free to use both cores).
ISSUE17 = "2,4,5"
ISSUE17_SYSTEMS = "nchan2,gateway-loops1,gateway-loops2"


def build_limit():
    """Builds bench/limit/limit.c with gcc into .build/limit/ when missing or older than the source
    (compare.sh does this first; this is for running compare.py by itself). Returns an error or None."""
    if os.environ.get("STREAMS_LIMIT"):
        return None if os.access(LIMIT, os.X_OK) else f"STREAMS_LIMIT={LIMIT} is not an executable"
    if os.access(LIMIT, os.X_OK) and os.path.getmtime(LIMIT) >= os.path.getmtime(LIMIT_SOURCE):
        return None
    gcc = shutil.which("gcc") or shutil.which("cc")
    if not gcc:
        return "gcc is not installed (bench/compare.sh installs it)"
    os.makedirs(os.path.dirname(LIMIT), exist_ok=True)
    done = subprocess.run([gcc, "-O2", "-o", LIMIT, LIMIT_SOURCE], capture_output=True, text=True, timeout=120)
    return None if done.returncode == 0 else f"gcc failed: {done.stderr.strip()[-300:]}"
from comparison.scenarios import Bench
from comparison.server import Server


def main():
    ap = argparse.ArgumentParser(description="The gateway side by side with nginx + Nchan (issue 5) "
                                             "and the bare C server (issue 16).")
    ap.add_argument("--quick", action="store_true", help="a tiny version of every scenario (CI smoke test)")
    ap.add_argument("--runs", type=int, help="runs of each scenario (default 2, 1 with --quick)")
    ap.add_argument("--scenarios", default="1,2,3,4,5,6,7",
                    help="which scenarios, e.g. 2,3 (1 includes 1b in a full run; 6 includes 6b); "
                         f"'issue16' for issue 16's table ({ISSUE16}, without 1b); 'issue17' for issue 17's "
                         f"({ISSUE17}; systems {ISSUE17_SYSTEMS} unless --systems is given)")
    ap.add_argument("--systems", default=None,
                    help="nchan,limit,gateway (the default; or some of them; limit is the bare C server, "
                         "bench/limit/limit.c), pinned to one core; nchan2,gateway-loops1,gateway-loops2 "
                         "(issue 17's, the default with --scenarios issue17) are free to use every core")
    ap.add_argument("--gateway-args", action="append", default=[], metavar="SYSTEM=ARGS",
                    help="the gateway's extra arguments for a gateway system, replacing its default "
                         "(gateway: none; gateway-loops1: '--loops 1'; gateway-loops2: '--loops 2'), e.g. "
                         "--gateway-args 'gateway-loops2=--loops 2 --some-flag'; repeatable")
    ap.add_argument("--out", help="report path (default bench/RESULTS.md; bench/RESULTS-issue16.md with "
                                  "--scenarios issue16, bench/RESULTS-issue17.md with --scenarios issue17; "
                                  "/tmp/streams-RESULTS-quick.md with --quick)")
    ap.add_argument("--wait-quiet", type=float, default=0, metavar="MINUTES",
                    help="first wait up to MINUTES for the 1-min load average to drop below --quiet-load")
    ap.add_argument("--quiet-load", type=float, default=1.5)
    ap.add_argument("--keep-temp", action="store_true", help="keep the temp dir (server configs and logs)")
    args = ap.parse_args()
    args.argv = sys.argv[1:]
    args.runs = args.runs or (1 if args.quick else 2)
    args.issue17 = "issue17" in args.scenarios.split(",")
    if args.systems is None:
        args.systems = ISSUE17_SYSTEMS if args.issue17 else "nchan,limit,gateway"
    asked = args.systems.split(",")
    unknown = [s for s in asked if s not in SYSTEMS]
    if unknown:
        sys.exit(f"unknown --systems {','.join(unknown)}: choose from {','.join(SYSTEMS)}")
    args.systems = [s for s in SYSTEMS if s in asked]  # the run order: Nchan, bare C, gateway (common.SYSTEMS)
    for setting in args.gateway_args:
        system, _, value = setting.partition("=")
        if system not in SPEC or SPEC[system]["kind"] != "gateway":
            sys.exit(f"--gateway-args {setting!r}: {system!r} is not a gateway system "
                     f"({', '.join(s for s in SYSTEMS if SPEC[s]['kind'] == 'gateway')})")
        SPEC[system]["args"] = shlex.split(value)
    wanted = set()
    args.skip_1b = False
    for token in args.scenarios.split(","):
        if token == "issue16":
            wanted.update(ISSUE16.split(","))
            args.skip_1b = True
        elif token == "issue17":
            wanted.update(ISSUE17.split(","))
        else:
            wanted.add(token)
    if "1b" in wanted:  # 1b asked for by name: run scenario 1 with it
        wanted.add("1")
        args.skip_1b = False
    if "limit" in args.systems:
        error = build_limit()
        if error:
            sys.exit(f"the bare C server could not be built: {error} (or leave it out: --systems nchan,gateway)")
    for binary in (GATEWAY, LOAD):
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary} is missing: run bench/compare.sh (it builds both)")
    if os.cpu_count() < 2:
        sys.exit("needs at least 2 CPUs (server on CPU 0, load on CPU 1; issue 17's systems use both)")

    # A gateway system with extra arguments (issue 17's --loops) is started once first: a gateway that does
    # not know them exits at once, and every one of its runs would fail after minutes of the others' runs.
    for system in args.systems:
        if SPEC[system]["kind"] == "gateway" and SPEC[system]["args"]:
            probe = tempfile.mkdtemp(prefix="streams-probe-")
            try:
                with Server(system, probe):
                    pass
            except RuntimeError as error:
                sys.exit(f"{system} ({GATEWAY} {' '.join(SPEC[system]['args'])}) does not start: {error}\n"
                         "(issue 17's --loops not in this build? build it, set STREAMS_GATEWAY, or change the "
                         "arguments with --gateway-args)")
            finally:
                shutil.rmtree(probe, ignore_errors=True)

    bench = Bench(args)
    bench.quiet_note = wait_for_quiet(args.wait_quiet, args.quiet_load) if args.wait_quiet > 0 else None
    # A run of issue 16's table alone goes beside the last full run, not over it.
    out = args.out or (os.path.join(tempfile.gettempdir(), "streams-RESULTS-quick.md") if args.quick
                       else os.path.join(BENCH, "RESULTS-issue16.md") if args.scenarios == "issue16"
                       else os.path.join(BENCH, "RESULTS-issue17.md") if args.scenarios == "issue17"
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
    if args.issue17:  # issue 17's target table on standard output too
        from comparison.targets import Issue17Targets
        print("\n".join(Issue17Targets(bench).lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
