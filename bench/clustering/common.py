"""Paths, names and the machine, for bench/cluster.py."""
import os, subprocess


BENCH = os.path.dirname(os.path.abspath(__file__))
REDIS = "/usr/bin/redis-server"
SYSTEMS = ("cluster", "nchan", "single")
LABEL = {"cluster": "gateway cluster", "nchan": "Nchan cluster", "single": "single gateway"}
NODES = {"cluster": 2, "nchan": 2, "single": 1}


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
