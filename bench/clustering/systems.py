"""The three systems of bench/cluster.py, started fresh for every run."""
import os, time

from comparison.common import GATEWAY, ROOT, SERVER_CPU, TEMPLATE, children, free_port

from clustering.common import NODES, REDIS
from clustering.processes import Process, http_post_ok


class System:
    """A system under test: its redis-server (if any) and its nodes, all on CPU 0."""

    def __init__(self, kind, workdir):
        self.kind, self.workdir = kind, workdir
        self.redis = None
        self.redis_port = None
        self.nodes = []
        self.commands = []

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        if self.kind != "single":
            self.redis_port = free_port()
            d = os.path.join(self.workdir, "redis")
            command = ["taskset", "-c", SERVER_CPU, REDIS, "--port", str(self.redis_port), "--bind", "127.0.0.1",
                       "--dir", d, "--save", "", "--appendonly", "no", "--daemonize", "no", "--maxclients", "10000"]
            self.redis = Process("redis-server", command, d, self.redis_port).start()
            self.commands.append(command)
        for index in range(NODES[self.kind]):
            d = os.path.join(self.workdir, f"node{index + 1}")
            port = free_port()
            if self.kind == "nchan":
                os.makedirs(d, exist_ok=True)
                path = os.path.join(d, "nginx.conf")
                with open(path, "w") as f:
                    f.write(nchan_conf(d, port, self.redis_port))
                command = ["taskset", "-c", SERVER_CPU, "nginx", "-c", path, "-p", d + "/", "-e",
                           os.path.join(d, "error.log")]
            else:
                command = ["taskset", "-c", SERVER_CPU, GATEWAY, "--host", "127.0.0.1", "--port", str(port),
                           "--public", os.path.join(ROOT, "public")]
                if self.redis_port:
                    command += ["--redis", f"redis://127.0.0.1:{self.redis_port}"]
            node = Process(f"{self.kind} node {index + 1}", command, d, port).start()
            self.nodes.append(node)
            self.commands.append(command)
            if self.kind == "nchan":
                deadline = time.monotonic() + 5
                workers = children(node.proc.pid)
                while not workers and time.monotonic() < deadline:
                    time.sleep(0.05)
                    workers = children(node.proc.pid)
                if len(workers) != 1:
                    raise RuntimeError(f"expected one nginx worker, found {workers}")
                node.pid = workers[0]
        # Ready: a publish is acked on every node (so Redis is connected and its scripts loaded).
        for node in self.nodes:
            deadline = time.monotonic() + 15
            while not http_post_ok(node.port, "/events/bench-ready/0"):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{node.name} never acked a publish: {node.tail()}")
                time.sleep(0.1)
        time.sleep(0.3)

    def stop(self):
        for node in self.nodes:
            node.stop()
        if self.redis:
            self.redis.stop()

    @property
    def urls(self):
        return [f"http://127.0.0.1:{n.port}" for n in self.nodes]

    def cpu(self):
        """CPU seconds so far of each node and of redis-server."""
        out = {f"node{i + 1}": n.cpu() for i, n in enumerate(self.nodes)}
        if self.redis:
            out["redis"] = self.redis.cpu()
        return out


def nchan_conf(workdir, port, redis_port):
    """bench/nchan.conf.template (the single-node Nchan of compare.sh) plus Redis: an upstream
    with `nchan_redis_server` and `nchan_redis_pass` in each location (Nchan 1.3's spelling;
    `nchan_redis_url` + `nchan_use_redis on` is the older one, still accepted). Storage mode is
    Nchan's default, `distributed`: messages and channel state live in Redis, like the gateway's."""
    with open(TEMPLATE) as f:
        conf = f.read().replace("@DIR@", workdir).replace("@PORT@", str(port)).replace("@WORKERS@", "1")
    # In every location: set at the server level, nchan_redis_pass was not inherited by
    # these regex locations (Nchan 1.3.6 kept the channels in its own memory).
    server, pubsub = "  server {\n", "      nchan_pubsub;\n"
    if server not in conf or conf.count(pubsub) != 2:
        raise RuntimeError("bench/nchan.conf.template changed shape: cannot add the Redis lines")
    conf = conf.replace(server, f"  upstream streams_redis {{\n    nchan_redis_server redis://127.0.0.1:{redis_port};\n"
                                f"  }}\n{server}", 1)
    return conf.replace(pubsub, pubsub + "      nchan_redis_pass streams_redis;\n")
