#!/usr/bin/env python3
"""A reconnect storm on one gateway on Redis (issue 24): N subscribers of one topic
reconnect at once with Last-Event-ID; how long until every one is live, and how many
Redis commands the storm cost (INFO commandstats before and after).

    python3 bench/reconnect-storm/storm.py                       # 10,000 subscribers
    python3 bench/reconnect-storm/storm.py --subscribers 1000 --binary .build/debug/sse-gateway

Starts its own redis-server (--save "" --appendonly no) and one `sse-gateway --redis`
(fresh: it follows no topic yet, as after a restart), publishes --history values to the
topic, then opens every subscriber together with `Last-Event-ID: <resume-after>`. A
subscriber is live once it has the topic's last id (the replay after its id, through the
fence); then one more value is published and every subscriber must get it (live, no gap).
Prints one JSON object: time until all live, Redis commands during the storm (total and
per command), and whether every subscriber got exactly the ids after its Last-Event-ID.
Times are wall-clock: meaningful on a quiet machine only; the command counts are not.
"""
import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_command(port, *words):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(("*%d\r\n" % len(words) + "".join("$%d\r\n%s\r\n" % (len(w.encode()), w) for w in words)).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if data.startswith(b"$"):
                head, _, rest = data.partition(b"\r\n")
                if len(rest) >= int(head[1:]) + 2:
                    return rest[:int(head[1:])].decode()
            elif data.endswith(b"\r\n"):
                return data.decode()


def commandstats(port):
    calls = {}
    for line in redis_command(port, "INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_"):
            name, _, fields = line[len("cmdstat_"):].partition(":")
            calls[name] = int(dict(f.split("=") for f in fields.split(","))["calls"])
    return calls


def http(url, data=None):
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.read()


async def main_async(args, port, redis_port):
    # Phase 1: every subscriber connects together and reads until it holds the last id.
    results = [None] * args.subscribers
    reached_at = [None] * args.subscribers
    last = args.history
    done_live = asyncio.Event()
    live_count = [0]

    async def one(index):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        except OSError as error:
            results[index] = ("connect", str(error))
            return
        writer.write((f"GET /events/{args.topic} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      f"Last-Event-ID: {args.resume_after}\r\n\r\n").encode())
        ids, buffer = [], b""
        while True:
            try:
                chunk = await reader.read(65536)
            except OSError:
                break
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.startswith(b"id: "):
                    ids.append(int(line[4:].strip()))
            if ids and ids[-1] >= last and reached_at[index] is None:
                reached_at[index] = time.monotonic()
                live_count[0] += 1
                if live_count[0] == args.subscribers:
                    done_live.set()
            if ids and ids[-1] >= last + 1:
                break
        results[index] = ("ids", ids)
        writer.close()

    before = commandstats(redis_port)
    started = time.monotonic()
    tasks = [asyncio.create_task(one(i)) for i in range(args.subscribers)]
    try:
        await asyncio.wait_for(done_live.wait(), args.timeout)
    except asyncio.TimeoutError:
        pass
    all_live_at = time.monotonic()
    after = commandstats(redis_port)
    # Phase 2: one more value; every subscriber must get it live.
    http(f"http://127.0.0.1:{port}/events/{args.topic}", f"v{last + 1}".encode())
    await asyncio.wait(tasks, timeout=args.timeout)
    for task in tasks:
        task.cancel()
    expected = list(range(args.resume_after + 1, last + 2))
    exact = sum(1 for r in results if r and r[0] == "ids" and r[1] == expected)
    spent = {name: after.get(name, 0) - before.get(name, 0) for name in after}
    spent = {name: n for name, n in sorted(spent.items()) if n > 0}
    reached = [t for t in reached_at if t is not None]
    return {
        "subscribers": args.subscribers,
        "live": len(reached),
        "seconds_until_all_live": round(all_live_at - started, 3) if len(reached) == args.subscribers else None,
        "seconds_until_half_live": round(sorted(reached)[len(reached) // 2] - started, 3) if reached else None,
        "redis_commands_during_storm": sum(spent.values()),
        "redis_commands_by_name": spent,
        "exactly_the_ids_after_last_event_id_then_live": exact,
        "connect_errors": sum(1 for r in results if r and r[0] == "connect"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--history", type=int, default=100, help="values published before the storm")
    parser.add_argument("--resume-after", type=int, default=50, help="the subscribers' Last-Event-ID")
    parser.add_argument("--topic", default="storm")
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/sse-gateway"))
    parser.add_argument("--loops", type=int, help="the gateway's --loops (its default when absent)")
    parser.add_argument("--replay-count", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, 2 * args.subscribers + 1024)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    if wanted < args.subscribers + 200:
        sys.exit(f"the open-file limit ({hard}) is too low for {args.subscribers} subscribers")
    with tempfile.TemporaryDirectory() as workdir:
        redis_port, port = free_port(), free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--dir", workdir,
                                  "--save", "", "--appendonly", "no", "--maxclients", "10000"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        gateway = None
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    if "PONG" in (redis_command(redis_port, "PING") or ""):
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    sys.exit("redis-server did not start")
                time.sleep(0.05)
            command = [args.binary, "--host", "127.0.0.1", "--port", str(port), "--public", os.path.join(ROOT, "public"),
                       "--redis", f"redis://127.0.0.1:{redis_port}", "--replay-count", str(args.replay_count)]
            if args.loops:
                command += ["--loops", str(args.loops)]
            gateway = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, "gw.log"), "w"))
            deadline = time.monotonic() + 30
            while True:
                try:
                    if http(f"http://127.0.0.1:{port}/readyz")[0] == 200:
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    sys.exit("the gateway never became ready: " + open(os.path.join(workdir, "gw.log")).read()[-500:])
                time.sleep(0.1)
            for index in range(1, args.history + 1):
                http(f"http://127.0.0.1:{port}/events/{args.topic}", f"v{index}".encode())
            # The gateway follows no topic now (its publishes need none): as after a restart.
            time.sleep(1.5)
            report = asyncio.run(main_async(args, port, redis_port))
            report["command"] = " ".join(command)
            print(json.dumps(report, indent=2))
        finally:
            if gateway:
                gateway.terminate()
                gateway.wait(10)
            redis.terminate()
            redis.wait(10)


if __name__ == "__main__":
    main()
