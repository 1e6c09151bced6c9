"""Paths, names and the machine, for bench/cluster.py."""
import os, subprocess


BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bench/
REDIS = "/usr/bin/redis-server"
# The run order within a round and the report's column order (issue 12's three, and issue 24's
# fourth: one gateway on Redis).
SYSTEMS = ("single", "redis", "cluster", "nchan")
LABEL = {"cluster": "gateway cluster", "nchan": "Nchan cluster", "single": "single gateway",
         "redis": "one gateway on Redis"}
NODES = {"cluster": 2, "nchan": 2, "single": 1, "redis": 1}
# Issue 24's names for the same systems (bench/cluster.sh --issue24).
LABEL_ISSUE24 = {"single": "1 gateway, in memory", "redis": "1 gateway on Redis", "cluster": "2 gateways on Redis",
                 "nchan": "2 nginx + Nchan on Redis"}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def nchan_version():
    done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libnginx-mod-nchan"], capture_output=True, text=True)
    return done.stdout.strip() or "?"
