"""One server process, and redis-server spoken to and sampled (bench/cluster.py)."""
import os, signal, socket, subprocess, threading, time
import urllib.request

from comparison.common import limit_fds, pid_alive, proc_cpu_seconds, wait_for_port



# --- processes -----------------------------------------------------------------------------

class Process:
    """One server process pinned to CPU 0, stopped by pid (SIGTERM, SIGKILL after 10 s)."""

    def __init__(self, name, command, workdir, port):
        self.name, self.command, self.workdir, self.port = name, command, workdir, port
        self.proc = None
        self.pid = None  # the process measured (for nginx, its worker)

    def start(self):
        os.makedirs(self.workdir, exist_ok=True)
        out = open(os.path.join(self.workdir, "server.out"), "w")
        self.proc = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT, preexec_fn=limit_fds,
                                     cwd=self.workdir)
        self.pid = self.proc.pid
        if not wait_for_port(self.port, self.proc):
            self.stop()
            raise RuntimeError(f"{self.name} did not start: {self.tail()}")
        return self

    def tail(self):
        text = ""
        for name in ("server.out", "error.log"):
            try:
                with open(os.path.join(self.workdir, name)) as f:
                    text += f.read()[-600:]
            except OSError:
                pass
        return text.strip()

    def cpu(self):
        try:
            return proc_cpu_seconds(self.pid)
        except OSError:
            return 0.0

    def stop(self):
        if self.proc is None:
            return
        worker = self.pid if self.pid != self.proc.pid else None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if worker:
            deadline = time.monotonic() + 5
            while pid_alive(worker) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_alive(worker):
                os.kill(worker, signal.SIGKILL)
        self.proc = None


def redis_command(port, *words, timeout=5):
    """One command over RESP; returns the reply's text (bulk string or status line)."""
    request = f"*{len(words)}\r\n" + "".join(f"${len(w.encode())}\r\n{w}\r\n" for w in words)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request.encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if data.startswith(b"$"):
                header, _, rest = data.partition(b"\r\n")
                if len(rest) >= int(header[1:]) + 2:
                    return rest[:int(header[1:])].decode()
            elif data.endswith(b"\r\n"):
                return data.decode().strip()
    return data.decode()


def redis_info(port):
    """INFO cpu stats (one command): Redis CPU seconds (sys + user) and commands processed so far."""
    fields = {}
    for line in redis_command(port, "INFO", "cpu", "stats").splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            fields[key] = value.strip()
    return float(fields["used_cpu_sys"]) + float(fields["used_cpu_user"]), int(fields["total_commands_processed"])


class RedisSampler(threading.Thread):
    """INFO every 100 ms during a load run, so the publishing phase alone can be priced
    (the whole run also holds the subscribers' connects, which cost Redis work too)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.samples, self.halt = port, [], threading.Event()

    def run(self):
        while not self.halt.is_set():
            try:
                cpu, commands = redis_info(self.port)
                self.samples.append((time.monotonic(), cpu, commands))
            except OSError:
                pass
            self.halt.wait(0.1)

    def stop(self):
        self.halt.set()
        self.join(timeout=5)

    def at(self, when):
        """(cpu, commands, samples so far) interpolated at monotonic time `when`."""
        s = self.samples
        if not s:
            return None
        if when <= s[0][0]:
            return s[0][1], s[0][2], 0
        for i in range(1, len(s)):
            if s[i][0] >= when:
                (t0, c0, n0), (t1, c1, n1) = s[i - 1], s[i]
                f = (when - t0) / (t1 - t0) if t1 > t0 else 0
                return c0 + f * (c1 - c0), n0 + f * (n1 - n0), i
        return s[-1][1], s[-1][2], len(s)


def http_post_ok(port, path):
    try:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=b"ready", method="POST",
                                         headers={"Content-Type": "text/plain", "Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=2) as response:
            return 200 <= response.status < 300
    except OSError:
        return False
