#!/usr/bin/env python3
"""Counts, not times: how many writev calls and loop turns (epoll_wait) a gateway on Redis
spends delivering another gateway's publishes to its subscribers (issue 24).

    python3 bench/reconnect-storm/fanout_writes.py --binary .build/debug/sse-gateway

Starts redis-server and two gateways A and B (`--loops 1`), S subscribers of one topic on A,
then K publishes to B (or to A itself: `--publish-to same`) from 4 keep-alive publishers at once, and counts with
`perf stat -e syscalls:sys_enter_writev,syscalls:sys_enter_epoll_wait -p <A>` over the
publishing window. Prints writev per delivered event: 1.0 means one write per subscriber
per value; lower means a loop turn's values went out to each subscriber together.
"""
import argparse, asyncio, http.client, json, os, socket, subprocess, sys, tempfile, threading, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ready(port):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"gateway on {port} never ready")


def publisher(port, topic, count, errors):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for index in range(count):
        connection.request("POST", f"/events/{topic}", body=f"v{index}")
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            errors.append(response.status)


async def subscribers(port, topic, count, expected, started):
    received = [0] * count

    async def one(index):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET /events/{topic} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        buffer = b""
        while received[index] < expected:
            chunk = await reader.read(65536)
            if not chunk:
                break
            buffer += chunk
            received[index] += buffer.count(b"\nid: ") + (1 if buffer.startswith(b"id: ") else 0)
            buffer = buffer[buffer.rfind(b"\n"):] if b"\n" in buffer else buffer
        writer.close()

    tasks = [asyncio.create_task(one(i)) for i in range(count)]
    await asyncio.sleep(1.0)
    started.set()
    await asyncio.wait(tasks, timeout=120)
    return sum(received)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/sse-gateway"))
    parser.add_argument("--subscribers", type=int, default=200)
    parser.add_argument("--publishes", type=int, default=2000)
    parser.add_argument("--publish-to", choices=["other", "same"], default="other",
                        help="publish through the other gateway (B), or through A itself (its own subscribers)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        redis_port = free_port()
        procs = [subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--dir", workdir,
                                   "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)]
        try:
            time.sleep(0.5)
            ports = [free_port(), free_port()]
            for port in ports:
                procs.append(subprocess.Popen([args.binary, "--host", "127.0.0.1", "--port", str(port), "--loops", "1",
                                               "--public", os.path.join(ROOT, "public"),
                                               "--redis", f"redis://127.0.0.1:{redis_port}"],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            for port in ports:
                ready(port)
            started = threading.Event()
            result = {}
            listening = threading.Thread(target=lambda: result.setdefault("received", asyncio.run(
                subscribers(ports[0], "fan", args.subscribers, args.publishes, started))))
            listening.start()
            started.wait()
            perf = subprocess.Popen(["perf", "stat", "-x", ",", "-e",
                                     "syscalls:sys_enter_writev,syscalls:sys_enter_epoll_wait",
                                     "-p", str(procs[1].pid)], stderr=subprocess.PIPE, text=True)
            time.sleep(0.3)
            errors = []
            target = ports[1] if args.publish_to == "other" else ports[0]
            threads = [threading.Thread(target=publisher, args=(target, "fan", args.publishes // 4, errors))
                       for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            listening.join()
            perf.send_signal(2)
            counts = {}
            for line in perf.communicate()[1].splitlines():
                fields = line.split(",")
                if len(fields) > 2 and fields[2].startswith("syscalls:"):
                    counts[fields[2].split("enter_")[1]] = int(fields[0])
            delivered = result.get("received", 0)
            print(json.dumps({"subscribers": args.subscribers, "publishes": args.publishes,
                              "publish_to": args.publish_to, "refused": len(errors), "delivered": delivered,
                              "writev_on_A": counts.get("writev"), "loop_turns_on_A": counts.get("epoll_wait"),
                              "writev_per_delivered_event": round(counts.get("writev", 0) / max(1, delivered), 3),
                              "binary": args.binary}, indent=2))
        finally:
            for p in procs[::-1]:
                p.terminate()
                p.wait(10)


if __name__ == "__main__":
    main()
