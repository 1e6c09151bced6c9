#!/usr/bin/env python3
"""Redis CPU per publish: one Redis against a 3-master Redis Cluster (issue 22).

Starts its own redis-servers (Debian's) on free ports in a temporary directory:
one plain server, then a cluster of 3 masters (`redis-cli --cluster create`, no
replicas), and drives each with the gateway's publish script at a fixed offered
load from one pipelined client per node (the client is not the bottleneck: what
is measured is Redis's CPU per publish, not the rate). Optionally subscribers
(one connection per node, subscribed to every topic that node serves) so that
each publish is delivered once.

Per node it prints the script's own time (`INFO commandstats`, usec per call of
EVALSHA: the Lua, the key writes, the publish's fan-out) and the whole process's
CPU (`INFO cpu` user + sys delta, which adds reading, parsing and writing the
sockets) divided by the publishes that node ran. Variants:

  single/PUBLISH    one Redis, the script as on main (global PUBLISH)
  single/SPUBLISH   one Redis, the cluster form (SPUBLISH on sse:{T}:ch)
  cluster1/SPUBLISH one cluster-enabled node holding all 16384 slots: cluster mode's own cost
  cluster/SPUBLISH  3 masters, the cluster form: each node runs 1/3 of the publishes
  cluster/PUBLISH   3 masters, global PUBLISH: every node's bus relays every message
                    to every other node (what sharded pub/sub avoids)

  python3 bench/redis-cluster/cpu_per_publish.py [--publishes 60000] [--topics 2000]
                                                  [--subscribers] [--pipeline 64]
On 2 shared cores the shards share the machine: the per-shard CPU per publish is the
figure that carries over to shards on their own machines (each takes 1/N of the
publishes at that cost), so the cluster's capacity projects to N / cost.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"

# The gateway's publish script (Sources/StreamCluster/ClusterScripts.swift on main) in two
# forms. Cluster form: no cross-slot key (the refloor and liveness keys would be on other
# nodes: "non local key"), its message by SPUBLISH on a channel in the topic's slot.
PUBLISH_TAIL = """
local n = 0
local counts = redis.call('HGETALL', KEYS[4])
for i = 1, #counts, 2 do
  if counts[i] ~= ARGV[9] then n = n + tonumber(counts[i + 1]) end
end
return {id, n}
"""
SCRIPT_BODY = """
local channel = ARGV[1]
local id = redis.call('HINCRBY', KEYS[1], channel, 1)
local sid = string.format('%d', id)
local t = redis.call('TIME')
local ms = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
if channel == 'state' then
  redis.call('HSET', KEYS[2], 'id', sid, 'data', ARGV[2], 'event', ARGV[3])
elseif tonumber(ARGV[5]) > 0 then
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[5], sid .. '-0', 'd', ARGV[2], 'e', ARGV[3], 't', ms)
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
end
redis.call('{command}', ARGV[7], string.sub(channel, 1, 1) .. sid .. '\\n' .. ARGV[3] .. '\\n' .. ARGV[2])
"""
SINGLE_PREFIX = """
if redis.call('EXISTS', 'sse:refloor') == 1 then
  return redis.error_reply('REFLOOR')
end
"""


def script(command, single):
    return (SINGLE_PREFIX if single else "") + SCRIPT_BODY.replace("{command}", command) + PUBLISH_TAIL


def crc16(data):
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def key_slot(key):
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    return crc16(key) % 16384


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, str):
            arg = arg.encode()
        elif isinstance(arg, int):
            arg = str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


class Conn:
    """A blocking RESP2 connection: send commands, read whole replies."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.sock.makefile("rb")

    def send(self, data):
        self.sock.sendall(data)

    def reply(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)
            return data[:-2]
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise RuntimeError("bad reply %r" % line)

    def call(self, *args):
        self.send(encode(*args))
        value = self.reply()
        if isinstance(value, RuntimeError):
            raise value
        return value

    def close(self):
        self.sock.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Servers:
    def __init__(self, root):
        self.root = root
        self.procs = []

    def start(self, cluster):
        port = free_port()
        directory = os.path.join(self.root, str(port))
        os.makedirs(directory)
        args = [REDIS, "--port", str(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "",
                "--appendonly", "no", "--daemonize", "no", "--logfile", os.path.join(directory, "log")]
        if cluster:
            args += ["--cluster-enabled", "yes", "--cluster-port", str(free_port()), "--cluster-node-timeout", "2000"]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        for _ in range(500):
            try:
                Conn(port).call("PING")
                return port
            except OSError:
                time.sleep(0.01)
        raise RuntimeError("redis-server on %d did not start" % port)

    def stop(self):
        for proc in self.procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        self.procs = []


def info(port, section):
    fields = {}
    for line in Conn(port).call("INFO", section).decode().splitlines():
        if ":" in line:
            name, value = line.split(":", 1)
            fields[name] = value
    return fields


def node_cpu(port):
    fields = info(port, "cpu")
    return float(fields["used_cpu_user"]) + float(fields["used_cpu_sys"])


def evalsha_stats(port):
    fields = info(port, "commandstats")
    raw = fields.get("cmdstat_evalsha", "calls=0,usec=0")
    stats = dict(item.split("=") for item in raw.split(","))
    return int(stats["calls"]), int(stats["usec"])


class Drain(threading.Thread):
    """A subscriber connection read and discarded, counting messages."""

    def __init__(self, conn):
        super().__init__(daemon=True)
        self.conn = conn
        self.bytes = 0

    def run(self):
        try:
            while True:
                data = self.conn.sock.recv(1 << 16)
                if not data:
                    return
                self.bytes += len(data)
        except OSError:
            return


def run_variant(name, ports, owner_of_slot, command, single, args):
    body = script(command, single)
    shas = {}
    for port in ports:
        shas[port] = Conn(port).call("SCRIPT", "LOAD", body).decode()
        Conn(port).call("CONFIG", "RESETSTAT")
    topics = ["t%d" % i for i in range(args.topics)]
    channel_of = (lambda t: "sse:{%s}:ch" % t) if command == "SPUBLISH" else (lambda t: "sse:t:%s" % t)
    node_of = {t: owner_of_slot(key_slot(("sse:{%s}:id" % t).encode())) for t in topics}
    drains = []
    if args.subscribers:
        for port in ports:
            conn = Conn(port)
            mine = [t for t in topics if node_of[t] == port] if command == "SPUBLISH" else topics
            if command == "SPUBLISH":
                by_slot = {}
                for t in mine:
                    by_slot.setdefault(key_slot(channel_of(t).encode()), []).append(channel_of(t))
                for channels in by_slot.values():
                    conn.send(encode("SSUBSCRIBE", *channels))
                    for _ in channels:
                        conn.reply()
            elif port == ports[0]:
                # One subscriber of every topic, on the first node (global pub/sub reaches it from any node).
                for start in range(0, len(mine), 500):
                    chunk = [channel_of(t) for t in mine[start:start + 500]]
                    conn.send(encode("SUBSCRIBE", *chunk))
                    for _ in chunk:
                        conn.reply()
            else:
                conn.close()
                continue
            drain = Drain(conn)
            drain.start()
            drains.append(drain)
    data = "x" * args.size
    conns = {port: Conn(port) for port in ports}
    cpu_before = {port: node_cpu(port) for port in ports}
    pending = {port: 0 for port in ports}
    started = time.monotonic()
    for index in range(args.publishes):
        t = topics[index % len(topics)]
        port = node_of[t]
        conns[port].send(encode("EVALSHA", shas[port], 4, "sse:{%s}:id" % t, "sse:{%s}:state" % t,
                                "sse:{%s}:events" % t, "sse:{%s}:n:events" % t, "events", data, "", 0, 100,
                                60000, channel_of(t), "sse:gw:", "bench"))
        pending[port] += 1
        if pending[port] >= args.pipeline:
            for _ in range(pending[port]):
                value = conns[port].reply()
                if isinstance(value, RuntimeError):
                    raise value
            pending[port] = 0
    for port in ports:
        for _ in range(pending[port]):
            conns[port].reply()
    elapsed = time.monotonic() - started
    time.sleep(0.2)
    rows = []
    for port in ports:
        calls, usec = evalsha_stats(port)
        cpu = node_cpu(port) - cpu_before[port]
        rows.append((port, calls, usec / max(calls, 1), cpu * 1e6 / max(calls, 1), cpu))
    total_cpu = sum(r[4] for r in rows)
    print("%-17s %8d publishes in %5.1f s (client-bound rate %6.0f/s)" % (name, args.publishes, elapsed,
                                                                           args.publishes / elapsed))
    for port, calls, script_us, cpu_us, cpu in rows:
        print("    node :%-5d %7d publishes  script %6.1f µs/publish  process CPU %6.1f µs/publish  (%.2f s)"
              % (port, calls, script_us, cpu_us, cpu))
    print("    all nodes: process CPU %.1f µs per publish of the whole cluster; busiest node %.1f µs per publish it ran"
          % (total_cpu * 1e6 / args.publishes, max(r[3] for r in rows)))
    for conn in conns.values():
        conn.close()
    for drain in drains:
        drain.conn.close()
    return total_cpu * 1e6 / args.publishes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--publishes", type=int, default=60000)
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--size", type=int, default=100, help="bytes of data per publish")
    parser.add_argument("--pipeline", type=int, default=64)
    parser.add_argument("--subscribers", action="store_true", help="one subscriber per node for every topic")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="redis-cluster-bench-")
    servers = Servers(root)
    try:
        print("redis: %s; %d publishes over %d topics, %d bytes each, pipeline %d, subscribers: %s" % (
            subprocess.run([REDIS, "--version"], capture_output=True, text=True).stdout.strip(), args.publishes,
            args.topics, args.size, args.pipeline, "yes" if args.subscribers else "no"))
        single = servers.start(cluster=False)
        run_variant("single/PUBLISH", [single], lambda slot: single, "PUBLISH", True, args)
        Conn(single).call("FLUSHALL")
        run_variant("single/SPUBLISH", [single], lambda slot: single, "SPUBLISH", False, args)
        servers.stop()

        # One cluster-enabled node holding every slot: what cluster mode itself costs per
        # publish (each redis.call of a script checks its key's slot), without sharing the cores.
        alone = servers.start(cluster=True)
        Conn(alone).call("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        for _ in range(600):
            if b"cluster_state:ok" in Conn(alone).call("CLUSTER", "INFO"):
                break
            time.sleep(0.05)
        run_variant("cluster1/SPUBLISH", [alone], lambda slot: alone, "SPUBLISH", False, args)
        servers.stop()

        ports = [servers.start(cluster=True) for _ in range(3)]
        subprocess.run([CLI, "--cluster", "create"] + ["127.0.0.1:%d" % p for p in ports] + ["--cluster-yes"],
                       check=True, stdout=subprocess.DEVNULL)
        for _ in range(600):
            if all(b"cluster_state:ok" in Conn(p).call("CLUSTER", "INFO") for p in ports):
                break
            time.sleep(0.05)
        owners = [None] * 16384
        for entry in Conn(ports[0]).call("CLUSTER", "SLOTS"):
            for slot in range(entry[0], entry[1] + 1):
                owners[slot] = entry[2][1]
        time.sleep(1)
        run_variant("cluster/SPUBLISH", ports, lambda slot: owners[slot], "SPUBLISH", False, args)
        run_variant("cluster/PUBLISH", ports, lambda slot: owners[slot], "PUBLISH", False, args)
    finally:
        servers.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
