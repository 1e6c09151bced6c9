#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 between one client (a gateway) and one upstream (Redis),
for the tests' partitions (Tests/TestSupport/LinkProxy.swift starts and drives it).

    python3 link_proxy.py UPSTREAM_PORT

Prints "listening PORT" once it accepts. Then signals change what the link does,
each acknowledged with a line "mode N NAME" (N counts the signals handled):

    SIGUSR1  cut:     every proxied connection is reset (both sides), and new ones
                      are reset as soon as they are accepted (a refused connect)
    SIGUSR2  stall:   connections stay open but nothing is forwarded either way, new
                      ones included (a silent network: what was sent waits, as TCP
                      retransmission would, and flows again on restore)
    SIGWINCH mute:    everything is forwarded but the messages Redis pushes to
                      subscribers (RESP `message`, `pmessage`, `smessage`), which are
                      dropped: pub/sub connections stay open and answer their
                      commands, but deliver nothing (a subscription gone silent)
    SIGHUP   restore: forwarding again; new connections are proxied

Real sockets, loopback only, no dependency beyond the standard library.
"""
import asyncio
import signal
import socket
import struct
import sys


class Link:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.mode = "flowing"
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.writers = set()
        self.changes = 0

    def change(self, mode):
        self.mode = mode
        if mode in ("flowing", "mute"):
            self.flowing.set()
        else:
            self.flowing.clear()
        if mode == "cut":
            for writer in list(self.writers):
                reset(writer)
            self.writers.clear()
        self.changes += 1
        print(f"mode {self.changes} {mode}", flush=True)

    async def accept(self, reader, writer):
        if self.mode == "cut":
            reset(writer)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            reset(writer)
            return
        if self.mode == "cut":
            reset(writer)
            reset(up_writer)
            return
        pair = (writer, up_writer)
        self.writers.update(pair)
        await asyncio.gather(self.pipe(reader, up_writer, pair, False), self.pipe(up_reader, writer, pair, True),
                             return_exceptions=True)

    async def pipe(self, reader, writer, pair, from_redis):
        pending = b""
        try:
            while True:
                await self.flowing.wait()
                data = await reader.read(65536)
                if not data:
                    break
                await self.flowing.wait()
                if writer not in self.writers:
                    break
                if from_redis:
                    # Whole replies only, so that pushed messages can be told and dropped.
                    pending += data
                    data, pending = self.replies(pending)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            for each in pair:
                if each in self.writers:
                    self.writers.discard(each)
                    each.close()


    def replies(self, buffer):
        """The complete replies at the start of `buffer` (less pushed messages while
        muted) and the incomplete rest."""
        out = []
        position = 0
        while True:
            end = value_end(buffer, position)
            if end is None:
                break
            if not (self.mode == "mute" and is_message(buffer, position)):
                out.append(buffer[position:end])
            position = end
        return b"".join(out), buffer[position:]


def value_end(buffer, position):
    """Where the RESP value starting at `position` ends, or None if it is incomplete."""
    line_end = buffer.find(b"\r\n", position)
    if line_end < 0:
        return None
    kind = buffer[position:position + 1]
    after = line_end + 2
    if kind in (b"$", b"=", b"!"):
        length = int(buffer[position + 1:line_end])
        if length < 0:
            return after
        return after + length + 2 if len(buffer) >= after + length + 2 else None
    if kind in (b"*", b">", b"~", b"%", b"|"):
        count = int(buffer[position + 1:line_end])
        if kind in (b"%", b"|"):
            count *= 2
        for _ in range(max(count, 0)):
            after = value_end(buffer, after)
            if after is None:
                return None
        if kind == b"|":  # attributes precede the value they describe
            return value_end(buffer, after)
        return after
    return after


def is_message(buffer, position):
    """Whether the value at `position` is a pushed pub/sub message."""
    if buffer[position:position + 1] not in (b"*", b">"):
        return False
    first = buffer.find(b"\r\n", position) + 2
    for name in (b"message", b"pmessage", b"smessage"):
        if buffer.startswith(b"$%d\r\n%s\r\n" % (len(name), name), first):
            return True
    return False


def reset(writer):
    """Closes with a reset (SO_LINGER 0), as a cut link is seen from both ends."""
    sock = writer.get_extra_info("socket")
    try:
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    writer.transport.abort()


async def main():
    link = Link(int(sys.argv[1]))
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, link.change, "cut")
    loop.add_signal_handler(signal.SIGUSR2, link.change, "stall")
    loop.add_signal_handler(signal.SIGWINCH, link.change, "mute")
    loop.add_signal_handler(signal.SIGHUP, link.change, "flowing")
    server = await asyncio.start_server(link.accept, "127.0.0.1", 0, backlog=1024)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
