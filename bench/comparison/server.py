"""A server under test (nginx + Nchan, the bare C server, or the gateway) started, pinned (or not) and stopped by pid; a sampler of its memory and CPU."""
import os, signal, statistics, subprocess, threading, time
from .common import SERVER_CPU, GATEWAY, LIMIT, ROOT, SPEC, TEMPLATE, children, free_port, limit_fds, pid_alive, proc_cpu_seconds, proc_status, taskset, wait_for_port
from .figures import held

class Server:
    """One server process of a system in common.SPEC: pinned to CPU 0, or free to use every core.
    `pids` are the processes measured (the nginx workers; the gateway or bare C process itself);
    memory, descriptors and CPU are their sums. `pid` is the first."""

    def __init__(self, system, workdir, tls=None):
        self.system, self.workdir, self.tls = system, workdir, tls
        self.kind = SPEC[system]["kind"]
        self.workers = SPEC[system]["workers"]
        self.port = free_port()
        self.proc = None
        self.pid = None
        self.pids = []
        self.command = None

    def start(self):
        os.makedirs(self.workdir, exist_ok=True)
        out = open(os.path.join(self.workdir, "server.out"), "w")
        if self.kind == "nchan":
            with open(TEMPLATE) as f:
                conf = (f.read().replace("@DIR@", self.workdir).replace("@PORT@", str(self.port))
                        .replace("@WORKERS@", str(self.workers)))
            if self.tls:
                cert, key = self.tls
                conf = conf.replace(f"listen 127.0.0.1:{self.port} backlog=4096;",
                                    f"listen 127.0.0.1:{self.port} ssl backlog=4096;\n"
                                    f"    ssl_certificate {cert};\n    ssl_certificate_key {key};")
            path = os.path.join(self.workdir, "nginx.conf")
            with open(path, "w") as f:
                f.write(conf)
            self.command = taskset(SERVER_CPU, self.system) + ["nginx", "-c", path, "-p", self.workdir + "/",
                            "-e", os.path.join(self.workdir, "error.log")]
        elif self.kind == "limit":
            if self.tls:
                raise RuntimeError("the bare C server has no TLS")
            # bench/limit/limit.c: 127.0.0.1:PORT, its descriptor limit raised to the hard limit (FD_LIMIT here).
            self.command = taskset(SERVER_CPU, self.system) + [LIMIT, str(self.port)]
        else:
            self.command = taskset(SERVER_CPU, self.system) + [
                GATEWAY, "--host", "127.0.0.1", "--port", str(self.port), "--public", os.path.join(ROOT, "public")]
            self.command += SPEC[self.system]["args"]
            if self.tls:
                self.command += ["--tls-cert", self.tls[0], "--tls-key", self.tls[1]]
        self.proc = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT, preexec_fn=limit_fds,
                                     cwd=self.workdir)
        if not wait_for_port(self.port, self.proc):
            self.stop()
            raise RuntimeError(f"{self.kind} did not start: {self.tail()}")
        self.pid = self.proc.pid
        self.pids = [self.pid]
        if self.kind == "nchan":
            deadline = time.monotonic() + 5
            workers = children(self.proc.pid)
            while len(workers) < self.workers and time.monotonic() < deadline:
                time.sleep(0.05)
                workers = children(self.proc.pid)
            if len(workers) != self.workers:
                self.stop()
                raise RuntimeError(f"expected {self.workers} nginx worker(s), found {workers}")
            self.pids = sorted(workers)
            self.pid = self.pids[0]
        time.sleep(0.3)
        return self

    def tail(self):
        try:
            with open(os.path.join(self.workdir, "server.out")) as f:
                text = f.read()[-400:]
            if self.kind == "nchan" and os.path.exists(os.path.join(self.workdir, "error.log")):
                with open(os.path.join(self.workdir, "error.log")) as f:
                    text += f.read()[-400:]
            return text.strip()
        except OSError:
            return ""

    def rss_kib(self):
        return sum(proc_status(pid, "VmRSS") for pid in self.pids)

    def fds(self):
        return sum(len(os.listdir(f"/proc/{pid}/fd")) for pid in self.pids)

    def cpu(self):
        return sum(proc_cpu_seconds(pid) for pid in self.pids)

    def stop(self):
        if self.proc is None:
            return
        workers = [pid for pid in self.pids if pid != self.proc.pid] if self.kind == "nchan" else []
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        for worker in workers:  # nginx's master waits for its workers; make sure, by pid
            deadline = time.monotonic() + 5
            while pid_alive(worker) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_alive(worker):
                os.kill(worker, signal.SIGKILL)
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class Sampler(threading.Thread):
    """Samples a server's (time, RSS KiB, open descriptors) every `interval` seconds until stopped."""

    def __init__(self, server, interval=0.5):
        super().__init__(daemon=True)
        self.server, self.interval, self.samples = server, interval, []
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            try:
                self.samples.append((time.monotonic(), self.server.rss_kib(), self.server.fds()))
            except (OSError, ValueError):
                return
            self.halt.wait(self.interval)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.halt.set()
        self.join(timeout=5)

    def peak_rss(self):
        return max((s[1] for s in self.samples), default=0)

    def rss_while_fds_at_least(self, fds):
        """Median RSS of the samples taken while the server held at least `fds` descriptors."""
        held = [s[1] for s in self.samples if s[2] >= fds]
        return statistics.median(held) if held else None
