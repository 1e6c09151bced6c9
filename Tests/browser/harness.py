"""Processes and sockets the browser tests drive: the real gateway executable,
publishing over HTTP, a `curl -N` subscriber, and a TCP proxy that can cut or
stall the page's connections. Everything listens on and talks to 127.0.0.1 only.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import select
import signal
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import quote

HOST = "127.0.0.1"
REQUEST_LINE = re.compile(rb"(?:GET|HEAD|POST|PUT|DELETE|OPTIONS) /\S* HTTP/1\.[01]\r\n")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / ".build" / "browser-artifacts"


def wait_until(predicate, timeout: float, interval: float = 0.05, what: str = "condition"):
    """Polls `predicate` until it returns something truthy; that value is returned."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def gateway_binary() -> Path:
    path = Path(os.environ.get("SSE_GATEWAY_BIN", ROOT / ".build" / "debug" / "sse-gateway"))
    if not path.is_file():
        raise RuntimeError(f"{path} not found: run `swift build` (Tests/browser/run.sh does)")
    return path


def test_certificate() -> tuple[Path, Path]:
    """A throwaway self-signed certificate for 127.0.0.1 and localhost (made once, with
    the openssl command): the HTTPS gateway of the HTTP/2 tests; the browser context
    ignores that nobody signed it."""
    directory = ARTIFACTS / "tls"
    cert, key = directory / "cert.pem", directory / "key.pem"
    if not cert.exists():
        directory.mkdir(parents=True, exist_ok=True)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                        "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       check=True, capture_output=True)
    return cert, key


class Gateway:
    """The sse-gateway executable on 127.0.0.1. After `stop()`, `start()` reuses the port.
    With `tls`, it serves HTTPS with the test certificate, and browsers speak HTTP/2
    to it (ALPN h2); the helpers here then use HTTPS (HTTP/1.1) too."""

    LISTENING = re.compile(r"listening on 127\.0\.0\.1:(\d+)")

    def __init__(self, name: str, *args: str, retry_ms: int = 300, tls: bool = False):
        self.name = name
        self.tls = tls
        if tls:
            cert, key = test_certificate()
            args = ("--tls-cert", str(cert), "--tls-key", str(key), *args)
        self.args = ["--host", HOST, "--public", str(ROOT / "public"), "--retry-ms", str(retry_ms), *args]
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.starts = 0
        ARTIFACTS.mkdir(parents=True, exist_ok=True)

    @property
    def log_path(self) -> Path:
        return ARTIFACTS / f"gateway-{self.name}-{self.starts}.log"

    def start(self) -> "Gateway":
        self.starts += 1
        log = open(self.log_path, "w+")
        # Binding the same port right after a stop can briefly fail; retry a few times.
        for attempt in range(20):
            log.seek(0)
            log.truncate()
            self.process = subprocess.Popen(
                [str(gateway_binary()), "--port", str(self.port), *self.args],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                match = self.LISTENING.search(self.log_path.read_text())
                if match:
                    self.port = int(match.group(1))
                    return self
                if self.process.poll() is not None:
                    break
                time.sleep(0.02)
            if self.process.poll() is None:
                self.process.kill()
                raise AssertionError(f"gateway did not report listening in 15s: {self.log_path.read_text()}")
            if self.port == 0 or attempt == 19:
                raise AssertionError(f"gateway exited {self.process.returncode}: {self.log_path.read_text()}")
            time.sleep(0.1)
        raise AssertionError("unreachable")

    def stop(self) -> int:
        """SIGTERM, as an operator would; returns the exit status (the API promises 0)."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"gateway did not exit within 10s of SIGTERM ({self.log_path})")

    def url(self, path: str = "") -> str:
        return f"{'https' if self.tls else 'http'}://{HOST}:{self.port}/{path}"

    # -- HTTP -------------------------------------------------------------------

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict | None = None) -> tuple[int, str]:
        if self.tls:
            connection = http.client.HTTPSConnection(HOST, self.port, timeout=10,
                                                     context=ssl._create_unverified_context())
        else:
            connection = http.client.HTTPConnection(HOST, self.port, timeout=10)
        try:
            connection.request(method, "/" + path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.read().decode()
        finally:
            connection.close()

    def publish(self, channel: str, topic: str, value: str, event: str | None = None,
                token: str | None = None) -> dict:
        """POSTs `value`; returns the gateway's JSON answer ({"id": "...", "subscribers": n})."""
        path = f"{channel}/{topic}" + (f"?event={quote(event)}" if event else "")
        headers = {"Content-Type": "text/plain; charset=utf-8"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        status, text = self.request("POST", path, value.encode(), headers)
        assert status == 200, f"publish to {path} answered {status}: {text}"
        return json.loads(text)

    def publish_burst(self, channel: str, topic: str, values: list[str]) -> None:
        """Publishes every value on one connection, all requests sent before any answer
        is read (pipelined), so they arrive faster than one request at a time."""
        payload = b"".join(
            f"POST /{channel}/{topic} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: text/plain\r\n"
            f"Content-Length: {len(v.encode())}\r\n\r\n".encode() + v.encode() for v in values)
        with socket.create_connection((HOST, self.port), timeout=15) as sock:
            sender = threading.Thread(target=sock.sendall, args=(payload,), daemon=True)
            sender.start()
            received = b""
            while received.count(b'"subscribers":') < len(values):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
            sender.join(timeout=15)
        statuses = re.findall(rb"HTTP/1\.1 (\d{3})", received)
        assert len(statuses) == len(values) and set(statuses) == {b"200"}, \
            f"burst: {len(statuses)} answers of {len(values)}, statuses {set(statuses)}"

    def metrics(self) -> dict[str, float]:
        status, text = self.request("GET", "metrics")
        assert status == 200, status
        values = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                values[name] = float(value)
        return values


class CurlSubscriber:
    """`curl -sN` on a stream, read on a thread; `text` is everything received so far."""

    def __init__(self, url: str):
        self.process = subprocess.Popen(["curl", "-sN", "--no-buffer", "--insecure", url],
                                        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self._chunks: list[bytes] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                return
            with self._lock:
                self._chunks.append(chunk)

    @property
    def text(self) -> str:
        with self._lock:
            return b"".join(self._chunks).decode()

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=5)


class Proxy:
    """A TCP proxy in front of a gateway, so a test can do to the page's connections
    what a network does: `cut()` closes every connection and holds new ones (the page
    sees its streams drop and its retries hang) until `restore()`; `stall_events()`
    stops reading from the gateway on connections that carry `GET /events/…` (a client
    that stopped reading, as a phone in a tunnel does), so the gateway's queue fills.
    `request_heads` records every request head the page sent, in order."""

    def __init__(self, upstream_port: int, upstream_rcvbuf: int | None = None):
        self.upstream_port = upstream_port
        self.upstream_rcvbuf = upstream_rcvbuf
        self.listener = socket.create_server((HOST, 0))
        self.port = self.listener.getsockname()[1]
        self.request_heads: list[str] = []
        self._lock = threading.Condition()
        self._holding = False
        self._stalled = False
        self._live: set[socket.socket] = set()
        self._closed = False
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def url(self, path: str = "") -> str:
        return f"http://{HOST}:{self.port}/{path}"

    def cut(self) -> None:
        with self._lock:
            self._holding = True
            live, self._live = self._live, set()
        for sock in live:
            _close(sock)

    def restore(self) -> None:
        with self._lock:
            self._holding = False
            self._lock.notify_all()

    def stall_events(self, stalled: bool) -> None:
        with self._lock:
            self._stalled = stalled
            self._lock.notify_all()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._holding = False
            live, self._live = self._live, set()
            self._lock.notify_all()
        _close(self.listener)
        for sock in live:
            _close(sock)

    def _accept_loop(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket):
        with self._lock:
            self._lock.wait_for(lambda: not self._holding or self._closed)
            if self._closed:
                _close(client)
                return
            self._live.add(client)
        upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if self.upstream_rcvbuf:
            # Before connect, so the receive window stays small: a stall backs up fast.
            upstream.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.upstream_rcvbuf)
        try:
            upstream.connect((HOST, self.upstream_port))
        except OSError:
            _close(client)
            return
        with self._lock:
            self._live.add(upstream)
        state = {"events": False}
        threading.Thread(target=self._pump_requests, args=(client, upstream, state), daemon=True).start()
        self._pump_responses(upstream, client, state)

    def _pump_requests(self, client, upstream, state):
        pending = b""
        try:
            while True:
                chunk = client.recv(65536)
                if not chunk:
                    break
                pending += chunk
                while True:
                    start = REQUEST_LINE.search(pending)
                    if not start:
                        pending = pending[-8192:]
                        break
                    end = pending.find(b"\r\n\r\n", start.start())
                    if end < 0:
                        pending = pending[start.start():]
                        break
                    head = pending[start.start():end]
                    pending = pending[end + 4:]
                    with self._lock:
                        self.request_heads.append(head.decode("latin-1"))
                    if head.startswith(b"GET /events/"):
                        state["events"] = True
                upstream.sendall(chunk)
        except OSError:
            pass
        _close(upstream)
        _close(client)

    def _pump_responses(self, upstream, client, state):
        try:
            while True:
                with self._lock:
                    while self._stalled and state["events"] and not self._closed:
                        self._lock.wait(0.05)
                readable, _, _ = select.select([upstream], [], [], 0.05)
                if not readable:
                    continue
                chunk = upstream.recv(65536)
                if not chunk:
                    break
                client.sendall(chunk)
        except (OSError, ValueError):
            pass
        _close(upstream)
        _close(client)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


def hs256_token(secret: str, claims: dict) -> str:
    """A JWT signed with HS256 (the secret made by the test, never checked in)."""
    def b64url(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    signing_input = b64url(b'{"alg":"HS256","typ":"JWT"}') + "." + b64url(json.dumps(claims).encode())
    signature = hmac.new(secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64url(signature)
