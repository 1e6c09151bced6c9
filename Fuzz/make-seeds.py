#!/usr/bin/env python3
"""Writes the committed seed corpus under Fuzz/corpus/ (run from anywhere; rewrites it whole).

Each target's input starts with control bytes (see the target's doc comment), so every seed
is control bytes + a realistic payload: requests as browsers, curl and EventSource send them,
chunked bodies, SSE values and streams, topic names and header values.
"""
import base64
import os
import shutil
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def request_control(limit_scale=0, cuts=()):
    """Byte 0: limits scale (bits 3-7) and cut count (bits 0-2); then 2 bytes per cut."""
    assert len(cuts) <= 7 and limit_scale < 32
    return bytes([limit_scale << 3 | len(cuts)]) + b"".join(struct.pack("<H", c) for c in cuts)


REQUESTS = {
    "get-root": b"GET / HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n",
    "get-events-eventsource": (
        b"GET /events/chat/room-1 HTTP/1.1\r\nHost: localhost:8080\r\nAccept: text/event-stream\r\n"
        b"Cache-Control: no-cache\r\nLast-Event-ID: 41\r\nOrigin: http://localhost:8080\r\n"
        b"Connection: keep-alive\r\n\r\n"),
    "get-state-encoded": b"GET /state/sensors%2Ftemp/%41 HTTP/1.1\r\nHost: h\r\n\r\n",
    "head-metrics": b"HEAD /metrics HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    "post-event": (
        b"POST /events/chat?event=msg HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer s3cret\r\n"
        b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 11\r\n\r\nhello world"),
    "post-state-json": (
        b"POST /state/prices/eur HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
        b"Content-Length: 27\r\n\r\n{\"bid\":1.0842,\"ask\":1.0844}"),
    "post-chunked": (
        b"POST /events/log HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;name=value\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Checksum: 1\r\n\r\n"),
    "post-expect-continue": (
        b"POST /state/big HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nbody"),
    "pipelined": (
        b"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n"
        b"POST /events/a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
        b"GET /metrics HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"),
    "http10": b"GET /healthz HTTP/1.0\r\n\r\n",
    "http10-keep-alive": b"GET /index.html HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /app.js HTTP/1.0\r\n\r\n",
    "options-asterisk": b"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
    "cors-preflight": (
        b"OPTIONS /events/chat HTTP/1.1\r\nHost: h\r\nOrigin: https://example.test\r\n"
        b"Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization\r\n\r\n"),
    "absolute-form": b"GET http://localhost:8080/state/x?y=1 HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
    "bare-lf-leading-crlf": b"\r\n\r\nGET /x?a=b HTTP/1.1\nHost: h\nX-Empty:\n\n",
    "list-headers": (
        b"GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nContent-Length: 0, 0\r\n"
        b"X-Obs: caf\xc3\xa9 \xff\r\n\r\n"),
    "refused-cl-and-te": (
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    "refused-obs-fold": b"GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n  folded\r\n\r\n",
    "refused-http2-preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    "refused-tls-hello": bytes.fromhex("160301020001000200030379") + b"\x00" * 8,
    "refused-te-gzip": b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
}


def chunked_control(limit_scale=0, cuts=(), spelling=0):
    return request_control(limit_scale, cuts)[:1] + bytes([spelling]) + request_control(limit_scale, cuts)[1:]


CHUNKED = {
    "simple": b"5\r\nhello\r\n0\r\n\r\n",
    "extensions-trailers": b"5;a=b;c=\"d e\"\r\nhello\r\n1A ; x\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\nY: 2\r\n\r\n",
    "bare-lf": b"3\nabc\n0\n\n",
    "uppercase-leading-zeros": b"000A\r\n0123456789\r\n00\r\n\r\n",
    "empty": b"0\r\n\r\n",
    "then-next-request": b"2\r\nhi\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n",
    "refused-signed": b"-1\r\nx\r\n0\r\n\r\n",
    "refused-overlong-size": b"fffffffffffffffff\r\n",
    "refused-no-crlf-after-data": b"3\r\nabcX0\r\n\r\n",
}

SSE = {
    # flags: bit 0 id (8 bytes LE), bit 1 event name (length byte + name), bits 2-4 cut count.
    "id-event-value": b"\x03" + struct.pack("<Q", 7) + b"\x07message" + b"hello",
    "multiline": b"\x01" + struct.pack("<Q", 1234567) + b"line1\nline2\r\nline3\rline4\n",
    "empty-value": b"\x00",
    "unicode": b"\x02\x04temp" + "héllo ✓ 🎉\u2028".encode(),
    "injection": b"\x03" + struct.pack("<Q", 2**64 - 1) + b"\x0ca\r\nid: 5\n\nx" + b"data: x\n\nid: 9\nevent: y\n",
    "stream-with-cuts": bytes([3 << 2]) + struct.pack("<HHH", 3, 11, 40)
        + b"\xef\xbb\xbfretry: 1000\n: hb\n\nid: 1\nevent: x\ndata: y\ndata:z\r\n\r\nid\ndata\n\n",
    "json": b"\x01" + struct.pack("<Q", 42) + b'{"bid":1.0842,"ask":1.0844}',
}

TOPIC = {
    "plain": b"chat/room-1",
    "segments": b"a/b/c.d_e~f-g",
    "escaped": b"%41bc/%7e",
    "empty-segment": b"a//b",
    "dot-segment": b"a/../b",
    "encoded-dots": b"%2e%2E",
    "encoded-slash": b"a%2Fb",
    "malformed-escape": b"%zz",
    "long": b"x" * 200,
    "last-event-id": b"18446744073709551615",
    "last-event-id-overflow": b"18446744073709551616",
    "query": b"event=msg&x=%41+b&event=tick",
    "non-ascii": "caf\u00e9".encode(),
}


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=")


def token(header, claims, signature=b"\x01" * 32):
    """A compact token; the signature is filler (the fuzz target never checks one)."""
    return b64url(header) + b"." + b64url(claims) + b"." + b64url(signature)


CLAIMS = b'{"exp":1900000000,"nbf":1700000000,"aud":["streams","other"],"sse":{"subscribe":["chat/*","news"],"publish":["*"]}}'
JWT = {
    # Byte 0: 0 a token, 1 JSON text, 2 "pattern\ntopic".
    "token-hs256": b"\x00" + token(b'{"alg":"HS256","typ":"JWT"}', CLAIMS),
    "token-es256": b"\x00" + token(b'{"alg":"ES256","kid":"k1"}', b'{"sse":{"subscribe":["a/b/*"]},"aud":"streams"}', b"\x02" * 64),
    "token-none": b"\x00" + token(b'{"alg":"none"}', b'{"sse":{"publish":["x"]}}', b""),
    "token-crit": b"\x00" + token(b'{"alg":"HS256","crit":["exp"]}', b"{}"),
    "token-padded": b"\x00" + base64.urlsafe_b64encode(b'{"alg":"HS256"}') + b"." + b64url(b"{}") + b".AA",
    "base64url": b"\x00" + b"QUJD-_-_QQ",
    "json-claims": b"\x01" + CLAIMS,
    "json-escapes": b"\x01" + b'{"a\\u00e9":"\\ud83d\\ude00\\n\\"","b":[1,-0.5e-3,true,false,null,{}]}',
    "json-duplicate": b"\x01" + b'{"exp":1,"sse":{},"exp":2}',
    "json-nested": b"\x01" + b"[" * 15 + b"]" * 15,
    "json-numbers": b"\x01" + b"[0,-0,1e400,01,1.,1E+2,123456789012345678901234567890]",
    "pattern-prefix": b"\x02" + b"chat/*\nchat/a/b",
    "pattern-boundary": b"\x02" + b"chat/*\nchatroom/x",
    "pattern-any": b"\x02" + b"*\nnews",
    "pattern-exact": b"\x02" + b"chat/room-1\nchat/room-1",
    "pattern-bad": b"\x02" + b"a/*/b\na/x/b",
}


def write(target, seeds):
    folder = os.path.join(ROOT, target)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name, data in seeds.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


write("request", {
    **{name: request_control() + raw for name, raw in REQUESTS.items()},
    "pipelined-cut": request_control(cuts=(5, 40, 41, 90)) + REQUESTS["pipelined"],
    "chunked-cut": request_control(cuts=(60, 71, 72, 100)) + REQUESTS["post-chunked"],
    "tight-limits": request_control(limit_scale=4) + REQUESTS["post-event"],
})
write("chunked", {
    **{name: chunked_control() + raw for name, raw in CHUNKED.items()},
    "cut-spelled": chunked_control(cuts=(1, 4, 9), spelling=0b11111) + CHUNKED["extensions-trailers"],
    "tight-limits": chunked_control(limit_scale=2) + CHUNKED["extensions-trailers"],
})
write("sse", SSE)
write("topic", TOPIC)
write("jwt", JWT)
