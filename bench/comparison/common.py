"""Paths, logging, ports and what /proc says about processes and CPUs (shared by the other modules)."""
import os, resource, socket, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
# STREAMS_GATEWAY names another gateway binary (a build elsewhere, or a wrapper) for every gateway system.
GATEWAY = os.environ.get("STREAMS_GATEWAY") or os.path.join(ROOT, ".build", "release", "sse-gateway")
LOAD = os.path.join(ROOT, ".build", "release", "sse-load")
TEMPLATE = os.path.join(BENCH, "nchan.conf.template")
# The bare C server (issue 16): bench/limit/limit.c, a copy of ../shared/bench/limit.c, built with gcc by
# compare.sh (or by compare.py itself) into .build/limit/ unless STREAMS_LIMIT names a binary.
LIMIT_SOURCE = os.path.join(BENCH, "limit", "limit.c")
LIMIT = os.environ.get("STREAMS_LIMIT") or os.path.join(ROOT, ".build", "limit", "limit")
SERVER_CPU, LOAD_CPU = "0", "1"
FD_LIMIT = 20_000
# Run order within a round (Nchan #1, bare C #1, gateway #1, Nchan #2, …) and the report's column order.
# The first three are pinned to CPU 0 (issues 5 and 16); the last three are issue 17's, free to use every
# core (no taskset, for the server or its load): Nchan with two nginx workers, the gateway with one and two
# event loops.
SYSTEMS = ("nchan", "limit", "gateway", "nchan2", "gateway-loops1", "gateway-loops2")
LABEL = {"nchan": "Nchan", "limit": "bare C", "gateway": "gateway", "nchan2": "Nchan (2 workers)",
         "gateway-loops1": "gateway --loops 1", "gateway-loops2": "gateway --loops 2"}
# Per system: which server it is (kind: nchan, limit, gateway), nginx's worker_processes, the gateway's extra
# arguments (compare.py --gateway-args SYSTEM=ARGS replaces them), and whether it is pinned to SERVER_CPU
# (and its load to LOAD_CPU) or free to use every core.
SPEC = {
    "nchan": {"kind": "nchan", "workers": 1, "args": [], "pinned": True},
    "limit": {"kind": "limit", "workers": 1, "args": [], "pinned": True},
    "gateway": {"kind": "gateway", "workers": 1, "args": [], "pinned": True},
    "nchan2": {"kind": "nchan", "workers": 2, "args": [], "pinned": False},
    "gateway-loops1": {"kind": "gateway", "workers": 1, "args": ["--loops", "1"], "pinned": False},
    "gateway-loops2": {"kind": "gateway", "workers": 1, "args": ["--loops", "2"], "pinned": False},
}
# The report's ratio columns: (numerator, denominator), those whose both systems ran.
RATIOS = (("gateway", "nchan"), ("gateway", "limit"),
          ("gateway-loops2", "nchan2"), ("gateway-loops2", "gateway-loops1"), ("gateway-loops1", "nchan2"))


def kind(system):
    """nchan, limit or gateway: the server a system runs."""
    return SPEC[system]["kind"]


def pinned(system):
    return SPEC[system]["pinned"]


def taskset(cpu, system):
    """The `taskset -c CPU` prefix for a pinned system's server or load; nothing for a free one."""
    return ["taskset", "-c", cpu] if pinned(system) else []
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(*parts):
    print(time.strftime("%H:%M:%S"), *parts, file=sys.stderr, flush=True)


def limit_fds():
    """preexec_fn: at most FD_LIMIT descriptors (raised to it when the hard limit allows, or as root)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < FD_LIMIT:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))
            return
        except (ValueError, OSError):
            pass
    target = FD_LIMIT if hard == resource.RLIM_INFINITY else min(FD_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, target))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def proc_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def cpu_busy_seconds():
    """Per CPU, user + nice + system time so far (from /proc/stat), in seconds."""
    busy = {}
    with open("/proc/stat") as f:
        for line in f:
            name, *fields = line.split()
            if name.startswith("cpu") and name != "cpu":
                busy[name[3:]] = (int(fields[0]) + int(fields[1]) + int(fields[2])) / CLK_TCK
    return busy


class Interference:
    """How much CPU other processes took on the server's and the load's CPUs during a run:
    CPU busy time (user + nice + system) minus what the server and the load client used,
    as a share of the wall time. Near 0 on a quiet machine. For a server free to use every
    core (issue 17's systems) only the total can be told apart: `others_pct`, the busy time of
    every CPU minus the server's and the load's, as a share of the wall time (100 % = one core)."""

    def __init__(self, server):
        self.server = server

    def __enter__(self):
        self.wall, self.busy, self.server_cpu = time.monotonic(), cpu_busy_seconds(), self.server.cpu()
        return self

    def finish(self, result, load_cpu):
        wall = time.monotonic() - self.wall
        busy = cpu_busy_seconds()
        server_cpu = self.server.cpu() - self.server_cpu
        result["server_cpu_s"] = round(server_cpu, 3)
        if not pinned(self.server.system):
            others = sum(busy[c] - self.busy.get(c, 0) for c in busy) - server_cpu - load_cpu
            result["others_pct"] = round(max(0.0, others) / wall * 100)
            result["load_avg_1m"] = round(os.getloadavg()[0], 2)
            return
        result["others_cpu0_pct"] = round(max(0.0, busy[SERVER_CPU] - self.busy[SERVER_CPU] - server_cpu) / wall * 100)
        result["others_cpu1_pct"] = round(max(0.0, busy[LOAD_CPU] - self.busy[LOAD_CPU] - load_cpu) / wall * 100)
        result["load_avg_1m"] = round(os.getloadavg()[0], 2)

    def __exit__(self, *exc):
        pass


def children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def proc_meminfo_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return 0.0


def first_line(command):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        return ((done.stdout or "") + (done.stderr or "")).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "?"


def wait_for_quiet(minutes, threshold):
    """Polls the 1-minute load average every 30 s, at most `minutes`; returns a note for the report."""
    start = time.monotonic()
    while True:
        load = os.getloadavg()[0]
        waited = (time.monotonic() - start) / 60
        if load < threshold:
            return f"waited {waited:.0f} min for the 1-min load average to drop below {threshold} (it was {load:.2f})"
        if waited >= minutes:
            return (f"**the machine never got quiet**: after waiting {waited:.0f} min the 1-min load average was "
                    f"still {load:.2f} (other engineers building); ran anyway, so figures are noisy")
        log(f"load average {load:.2f} ≥ {threshold}; waiting (at most {minutes} min)")
        time.sleep(30)
