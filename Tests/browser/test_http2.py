"""Chromium and the gateway over HTTP/2: one HTTPS page (a throwaway certificate, which
the browser context is told to accept) opens many EventSources, and all of them are
open and receiving over the page's one connection. Over HTTP/1.1 the same page would
hang after six (the browser's per-site connection limit)."""
from __future__ import annotations

from harness import Gateway, wait_until

STREAMS = 24


def test_many_event_sources_share_one_http2_connection(browser):
    gateway = Gateway("http2-page", tls=True).start()
    context = browser.new_context(ignore_https_errors=True)
    try:
        page = context.new_page()
        page.goto(gateway.url("healthz"))
        assert page.evaluate("() => performance.getEntriesByType('navigation')[0].nextHopProtocol") == "h2"
        page.evaluate("""n => {
            window.received = [];
            window.sources = [];
            for (let i = 0; i < n; i++) {
                const source = new EventSource('/events/h2page-' + i);
                window.received.push([]);
                source.onmessage = e => window.received[i].push(e.data);
                window.sources.push(source);
            }
        }""", STREAMS)
        page.wait_for_function("n => window.sources.filter(s => s.readyState === 1).length === n",
                               arg=STREAMS, timeout=15000)
        wait_until(lambda: gateway.metrics().get('sse_gateway_subscribers{channel="events"}') == STREAMS, 10,
                   what=f"{STREAMS} subscribers")
        for i in range(STREAMS):
            assert gateway.publish("events", f"h2page-{i}", f"value {i}")["subscribers"] == 1
        page.wait_for_function("n => window.received.every((r, i) => r.includes('value ' + i))",
                               arg=STREAMS, timeout=15000)
        metrics = gateway.metrics()
        # The page and its streams: one HTTP/2 connection (the metrics request is HTTP/1.1).
        assert metrics['sse_gateway_connections{protocol="http2"}'] == 1, metrics
        assert metrics["sse_gateway_http2_streams"] == STREAMS, metrics
        page.evaluate("() => window.sources.slice(0, 10).forEach(s => s.close())")
        # A closed EventSource is a reset stream: its subscriber leaves at once, the others stay.
        wait_until(lambda: gateway.metrics().get('sse_gateway_subscribers{channel="events"}') == STREAMS - 10, 10,
                   what="closed EventSources to leave the hub")
        assert gateway.publish("events", f"h2page-{STREAMS - 1}", "still here")["subscribers"] == 1
        page.wait_for_function("n => window.received[n - 1].includes('still here')", arg=STREAMS, timeout=10000)
    finally:
        context.close()
        assert gateway.stop() == 0
