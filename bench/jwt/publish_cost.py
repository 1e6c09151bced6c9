#!/usr/bin/env python3
"""What verifying a token costs a publish (issue 15): publish-only requests/s and the
gateway's CPU per request, without a token (no key configured) and with a token on
every request (HS256, ES256; RS256 with --all), as in bench/ scenario 5 with wrk.

    python3 bench/jwt/publish_cost.py [--runs 6] [--duration 5] [--all]

Builds the release sse-gateway and JWTBenchmark (swift build -c release), makes the
keys with the openssl command in a temporary directory, then alternates the
configurations run by run, each round in a rotated order (none, HS256, ES256; HS256,
ES256, none; …), so that drift on a shared machine hits all of them alike; the
table gives the median of the runs, which one disturbed run does not move. The gateway runs on CPU 0 and wrk (1 thread, 32 keep-alive
connections, 128-byte bodies to 100 topics) on CPU 1, as in bench/compare.py. Each
token is signed once and sent with every request, as a publisher does until it
expires. Prints a Markdown table (medians, and every run with the load average) and
the CPU cost of one verification from JWTBenchmark (first use, and a token seen before).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER_CPU, LOAD_CPU = "0", "1"
CLAIMS = '{"exp":%d,"sse":{"publish":["bench/*"],"subscribe":["bench/*"]}}'
LUA = """wrk.method = "POST"
wrk.body = string.rep("x", 128)
wrk.headers["Content-Type"] = "text/plain"
local token = os.getenv("BENCH_TOKEN")
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, "/events/bench/" .. (n % 100))
end
"""


def run(command, **kwargs):
    return subprocess.run(command, check=True, text=True, capture_output=True, **kwargs).stdout


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Gateway:
    def __init__(self, binary: str, flags: list[str], log: str):
        self.process = subprocess.Popen(
            ["taskset", "-c", SERVER_CPU, binary, "--host", "127.0.0.1", "--port", "0", *flags],
            stdout=open(log, "w"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", open(log).read())
            if match:
                self.port = int(match.group(1))
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit(f"the gateway did not start: {open(log).read()}")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=15)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--duration", type=int, default=5, help="seconds of wrk per run")
    parser.add_argument("--all", action="store_true", help="RS256 too")
    args = parser.parse_args()
    for tool in ("wrk", "taskset", "openssl"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is needed (Debian: apt-get install {'util-linux' if tool == 'taskset' else tool})")

    subprocess.run(["swift", "build", "-c", "release", "--product", "sse-gateway"], cwd=ROOT, check=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "JWTBenchmark"], cwd=ROOT, check=True)
    gateway_binary = os.path.join(ROOT, ".build/release/sse-gateway")
    tool = os.path.join(ROOT, ".build/release/JWTBenchmark")

    work = tempfile.mkdtemp(prefix="jwt-bench-")
    try:
        secret = run(["openssl", "rand", "-hex", "32"]).strip()
        keys = {}
        for name, options in (("ec", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]),
                              ("rsa", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])):
            private, public = os.path.join(work, name + ".key"), os.path.join(work, name + ".pub")
            run(["openssl", "genpkey", *options, "-out", private])
            run(["openssl", "pkey", "-in", private, "-pubout", "-out", public])
            keys[name] = (private, public)
        claims = CLAIMS % (int(time.time()) + 24 * 3600)
        configurations = [
            ("no token", [], None, None),
            ("HS256", ["--jwt-secret", secret], "hmac:" + secret, "hmac:" + secret),
            ("ES256", ["--jwt-public-key", keys["ec"][1]], keys["ec"][0], keys["ec"][1]),
        ]
        if args.all:
            configurations.append(("RS256", ["--jwt-public-key", keys["rsa"][1]], keys["rsa"][0], keys["rsa"][1]))

        print("## One verification (JWTBenchmark, CPU time)\n")
        tokens = {}
        for name, _, signing, verifying in configurations[1:]:
            tokens[name] = run([tool, "sign", signing, claims]).strip()
            print("    " + run([tool, "verify", verifying, tokens[name], "2000"]).strip())

        lua = os.path.join(work, "post.lua")
        open(lua, "w").write(LUA)
        results = {name: [] for name, *_ in configurations}
        for number in range(1, args.runs + 1):
            shift = (number - 1) % len(configurations)
            for name, flags, _, _ in configurations[shift:] + configurations[:shift]:
                gateway = Gateway(gateway_binary, flags, os.path.join(work, "gateway.log"))
                try:
                    start = cpu_seconds(gateway.process.pid)
                    environment = dict(os.environ, BENCH_TOKEN=tokens.get(name, ""))
                    output = run(["taskset", "-c", LOAD_CPU, "wrk", "-t1", "-c32", f"-d{args.duration}s",
                                  "-s", lua, f"http://127.0.0.1:{gateway.port}"], env=environment)
                    cpu = cpu_seconds(gateway.process.pid) - start
                finally:
                    gateway.stop()
                requests = int(re.search(r"(\d+) requests in", output).group(1))
                per_second = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
                bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
                if bad:
                    raise SystemExit(f"{name}: {bad.group(1)} refused publishes:\n{output}")
                load = os.getloadavg()[0]
                results[name].append((per_second, cpu / requests * 1e6, load))
                print(f"run {number} {name}: {per_second:,.0f} requests/s, {cpu / requests * 1e6:.1f} µs of gateway "
                      f"CPU per request (load average {load:.1f})", file=sys.stderr)

        def median(name, field):
            return statistics.median(run[field] for run in results[name])
        base_rate, base_cpu = median("no token", 0), median("no token", 1)
        print("\n## Publish-only with wrk (median of %d runs of %d s)\n" % (args.runs, args.duration))
        print("| configuration | requests/s | vs no token | gateway CPU per request (µs) | vs no token |")
        print("|---|---|---|---|---|")
        for name, *_ in configurations:
            rate, cpu = median(name, 0), median(name, 1)
            print(f"| {name} | {rate:,.0f} | {(rate / base_rate - 1) * 100:+.1f} % | {cpu:.1f} | "
                  f"{(cpu / base_cpu - 1) * 100:+.1f} % |")
        print("\nEvery run: requests/s, µs of gateway CPU per request, 1-minute load average after it.\n")
        for name, *_ in configurations:
            print(f"- {name}: " + "; ".join(f"{r:,.0f} / {c:.1f} / {l:.1f}" for r, c, l in results[name]))
        print(f"\nLoad average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs.")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
