"""The browser page (public/) in Debian's headless chromium against the real
sse-gateway executable. Each test drives the page the way a person would (URL
parameters, typing, clicking) and reads it through the element ids documented at
the top of public/app.js. See Tests/browser/README.md for what each one proves."""
from __future__ import annotations

import os
import re
import secrets
import shutil
import threading
import time


from harness import ARTIFACTS, ROOT, CurlSubscriber, Gateway, Proxy, hs256_token, wait_until

# Network errors the browser logs by itself when a test takes the gateway away on
# purpose: EventSource retries and the page's /metrics poll hit a closed port.
REFUSED = r"Failed to load resource: net::ERR_CONNECTION_REFUSED"


def header(head: str, name: str) -> str | None:
    """A header's value in a request head the proxy recorded, or None."""
    for line in head.split("\r\n")[1:]:
        key, _, value = line.partition(":")
        if key.strip().lower() == name.lower():
            return value.strip()
    return None


def lines_rendered(tab, selector: str) -> int:
    """Line boxes the element's text occupies on screen (height / line-height)."""
    return tab.page.eval_on_selector(selector, """el => {
        const style = getComputedStyle(el);
        const range = document.createRange();
        range.selectNodeContents(el);
        const height = range.getBoundingClientRect().height;
        return Math.round(height / parseFloat(style.lineHeight));
    }""")


def test_state_stream_shows_current_value_on_open(gateway, tab, topic):
    gateway.publish("state", topic, "superseded")
    assert gateway.publish("state", topic, "current value")["id"] == "2"

    tab.open(gateway.url(), f"topic={topic}&events=update&subscribe=state")
    tab.wait_status("state", "open")
    tab.wait_js("() => document.getElementById('state-value').dataset.empty === 'false'")
    assert tab.text("#state-value") == "current value"
    assert tab.text("#state-id") == "2"
    assert tab.text("#state-size") == "13 bytes"
    assert tab.text("#state-last-id") == "2"
    assert tab.attr("#subscribe-state", "aria-pressed") == "true"
    assert tab.attr("#events-status", "data-state") == "idle"

    # And it follows: a later value replaces it.
    gateway.publish("state", topic, "newer", event="update")
    tab.wait_js("() => document.getElementById('state-id').textContent === '3'")
    assert tab.text("#state-value") == "newer"
    assert tab.text("#state-event") == "event: update"
    tab.console.assert_clean()


def test_events_arrive_in_order_with_their_ids(gateway, tab, topic):
    tab.open(gateway.url(), f"topic={topic}&events=tick&subscribe=events")
    tab.wait_status("events", "open")

    published = []
    for n in range(1, 41):
        event = "tick" if n % 5 == 0 else None
        answer = gateway.publish("events", topic, f"event {n}", event=event)
        assert answer["subscribers"] == 1
        published.append((answer["id"], event or "message", f"event {n}"))

    entries = tab.wait_entries(40)
    got = [(e["data"]["id"], e["data"]["event"], e["value"]) for e in entries]
    assert got == published
    assert [e["shown"] for e in entries] == [f"#{n}" for n in range(1, 41)]
    assert [i["kind"] for i in tab.log_items()] == ["entry"] * 40, "no markers: nothing skipped or dropped"
    assert tab.text("#events-count") == "40"
    assert tab.text("#events-last-id") == "40"
    tab.console.assert_clean()


def test_event_type_not_listened_to_is_marked_not_silently_lost(gateway, tab, topic):
    tab.open(gateway.url(), f"topic={topic}&subscribe=events")
    tab.wait_status("events", "open")
    gateway.publish("events", topic, "one")
    gateway.publish("events", topic, "unheard", event="other")
    gateway.publish("events", topic, "three")
    tab.wait_entries(2)
    items = tab.log_items()
    assert [i["kind"] for i in items] == ["entry", "marker", "entry"]
    assert items[1]["data"] == {"kind": "skipped", "from": "2", "to": "2"}
    assert [i["data"].get("id") for i in items if i["kind"] == "entry"] == ["1", "3"]
    tab.console.assert_clean()


def test_multiline_value_renders_as_its_lines(gateway, tab, topic):
    # LF, CRLF and CR all split lines (API.md); an empty line and indentation survive.
    value = "first line\n  indented\r\nthird\rfourth\n\nafter a blank line"
    lines = ["first line", "  indented", "third", "fourth", "", "after a blank line"]

    tab.open(gateway.url(), f"topic={topic}&subscribe=both")
    tab.wait_status("state", "open")
    tab.wait_status("events", "open")
    gateway.publish("state", topic, value)
    gateway.publish("events", topic, value)
    tab.wait_js("() => document.getElementById('state-value').dataset.empty === 'false'")
    entry = tab.wait_entries(1)[0]

    assert tab.text("#state-value") == "\n".join(lines)
    assert entry["value"] == "\n".join(lines)
    # As rendered: innerText follows the layout, so collapsed whitespace would show here.
    assert tab.page.inner_text("#state-value").split("\n") == lines
    assert tab.page.inner_text("#events-log .entry .data").split("\n") == lines
    assert lines_rendered(tab, "#state-value") == len(lines)
    assert lines_rendered(tab, "#events-log .entry .data") == len(lines)
    tab.console.assert_clean()


def test_publishing_from_the_page_reaches_a_curl_subscriber(gateway, tab, topic):
    events = CurlSubscriber(gateway.url(f"events/{topic}"))
    state = CurlSubscriber(gateway.url(f"state/{topic}"))
    try:
        # The retry: line follows the response head: from then on curl is subscribed.
        for curl in (events, state):
            wait_until(lambda: "retry:" in curl.text, 10, what="curl to subscribe")
        tab.open(gateway.url(), f"topic={topic}&subscribe=events")
        tab.wait_status("events", "open")

        # Typed and sent from the keyboard (Ctrl+Enter in the form publishes).
        tab.page.select_option("#publish-channel", "events")
        tab.page.fill("#publish-event", "chat")
        tab.page.fill("#publish-body", "hello\nfrom the page")
        tab.page.focus("#publish-body")
        tab.page.keyboard.press("Control+Enter")

        tab.wait_js("() => document.getElementById('publish-result').dataset.status === '200'")
        assert tab.attr("#publish-result", "data-ok") == "true"
        assert tab.text("#publish-result") == '200 {"id":"1","subscribers":2}'
        frame = "id: 1\nevent: chat\ndata: hello\ndata: from the page\n\n"
        wait_until(lambda: frame in events.text, 10, what=f"curl to receive {frame!r}")

        # The page listens to the name it published with, so it shows its own event too.
        entry = tab.wait_entries(1)[0]
        assert (entry["data"]["id"], entry["data"]["event"], entry["value"]) == ("1", "chat", "hello\nfrom the page")
        assert "chat" in tab.page.input_value("#event-names")

        # The state channel, by clicking.
        tab.page.select_option("#publish-channel", "state")
        tab.page.fill("#publish-event", "")
        tab.page.fill("#publish-body", "state from the page")
        tab.page.click("#publish-button")
        tab.wait_js("() => document.getElementById('publish-result').textContent === "
                    "'200 {\"id\":\"1\",\"subscribers\":1}'")
        frame = "id: 1\ndata: state from the page\n\n"
        wait_until(lambda: frame in state.text, 10, what=f"curl to receive {frame!r}")
    finally:
        events.close()
        state.close()
    tab.console.assert_clean()


def test_publish_errors_and_token_are_shown(tab, topic, protocol):
    gw = Gateway(f"token-{protocol}", "--publish-token", "s3cret", tls=protocol == "http2").start()
    try:
        tab.console.allow(r"status of 401 \((Unauthorized)?\)",
                          "the browser logs the gateway's 401 to a publish without a token, on purpose")
        tab.open(gw.url(), f"topic={topic}")
        tab.page.fill("#publish-body", "x")
        tab.page.click("#publish-button")
        tab.wait_js("() => document.getElementById('publish-result').dataset.status === '401'")
        assert tab.attr("#publish-result", "data-ok") == "false"
        assert tab.text("#publish-result").startswith("401 ")

        tab.page.fill("#token", "s3cret")
        tab.page.click("#publish-button")
        tab.wait_js("() => document.getElementById('publish-result').dataset.status === '200'")
        assert tab.text("#publish-result") == '200 {"id":"1","subscribers":0}'

        # An invalid name is refused by the page itself: no request, no console error.
        tab.page.fill("#publish-event", "no spaces")
        tab.page.click("#publish-button")
        tab.wait_js("() => document.getElementById('publish-result').dataset.status === 'error'")
        assert "event name may contain only" in tab.text("#publish-result")
        tab.page.fill("#topic", "a//b")
        tab.page.press("#topic", "Enter")
        assert tab.page.is_visible("#topic-error")
        assert "empty segment" in tab.text("#topic-error")
        assert tab.attr("#state-status", "data-state") == "idle"
        assert gw.metrics()["sse_gateway_publishes_total{channel=\"events\"}"] == 1
        tab.console.assert_clean()
    finally:
        assert gw.stop() == 0


def test_token_subscribes_publishes_and_refusals_are_shown(tab, topic, protocol):
    secret = secrets.token_hex(32)
    gw = Gateway(f"jwt-{protocol}", "--jwt-secret", secret, "--subscribe-auth", "token", tls=protocol == "http2").start()
    try:
        tab.console.allow(r"status of 40[13] \((Unauthorized|Forbidden)?\)",
                          "the browser logs the gateway's 401 and 403 to the page's requests, on purpose")
        later = int(time.time()) + 3600
        # No token: the stream is refused with 401 and the page says a token is needed.
        tab.open(gw.url(), f"topic={topic}&subscribe=state")
        tab.wait_status("state", "closed")
        tab.wait_js("() => document.getElementById('state-error').dataset.status === '401'")
        assert "needs a token" in tab.text("#token-error")
        assert tab.attr("#token-error", "data-status") == "401"

        # A valid token for other topics: 403, naming the topic.
        tab.page.fill("#token", hs256_token(secret, {"exp": later, "sse": {"subscribe": ["elsewhere/*"]}}))
        tab.page.press("#token", "Enter")
        tab.wait_js("() => document.getElementById('state-error').dataset.status === '403'")
        assert topic in tab.text("#state-error")
        assert "does not grant" in tab.text("#token-error")

        # A token granting the topic: both streams open (token in the query), publishing
        # (token in the header) reaches them; the refusal message goes away.
        token = hs256_token(secret, {"exp": later, "sse": {"subscribe": [topic], "publish": [topic]}})
        tab.page.fill("#token", token)
        tab.page.click("#subscribe-both")
        tab.wait_status("state", "open")
        tab.wait_status("events", "open")
        assert not tab.page.is_visible("#token-error")
        assert tab.text("#events-path") == f"/events/{topic}?access_token=…"
        tab.page.fill("#publish-body", "with a token")
        tab.page.click("#publish-button")
        tab.wait_js("() => document.getElementById('publish-result').dataset.status === '200'")
        assert tab.text("#publish-result") == '200 {"id":"1","subscribers":1}'
        assert [e["value"] for e in tab.wait_entries(1)] == ["with a token"]

        # Kept in this tab only: sessionStorage, not localStorage.
        assert tab.page.evaluate("() => sessionStorage.getItem('streams.token')") == token
        assert token not in tab.page.evaluate("() => JSON.stringify(localStorage)")

        # Publishing to a topic the token does not grant: 403 in the result line.
        tab.page.fill("#topic", topic + "-other")
        tab.page.click("#publish-button")
        tab.wait_js("() => document.getElementById('publish-result').dataset.status === '403'")
        assert tab.text("#publish-result").startswith("403 Forbidden")
        metrics = gw.metrics()
        assert metrics['sse_gateway_auth_failures_total{reason="missing"}'] >= 1
        assert metrics['sse_gateway_auth_failures_total{reason="forbidden"}'] >= 2
        tab.console.assert_clean()
    finally:
        assert gw.stop() == 0


def test_stream_ends_when_its_token_expires(tab, topic, protocol):
    secret = secrets.token_hex(32)
    gw = Gateway(f"jwt-exp-{protocol}", "--jwt-secret", secret, "--subscribe-auth", "token", tls=protocol == "http2").start()
    try:
        tab.console.allow(r"status of 401 \((Unauthorized)?\)",
                          "the browser reconnects with the expired token and the gateway answers 401, on purpose")
        tab.open(gw.url(), f"topic={topic}")
        # exp 2 s ahead: the gateway accepts it for 5 s more (the leeway), then ends the stream.
        tab.page.fill("#token", hs256_token(secret, {"exp": int(time.time()) + 2, "sse": {"subscribe": [topic]}}))
        tab.page.click("#subscribe-events")
        tab.wait_status("events", "open")
        tab.wait_status("events", "closed", timeout=20)
        tab.wait_js("() => document.getElementById('events-error').dataset.status === '401'")
        assert "expired" in tab.text("#events-error")
        assert "Paste a valid token" in tab.text("#token-error")
        assert gw.metrics()['sse_gateway_auth_failures_total{reason="expired"}'] >= 1
        tab.console.assert_clean()
    finally:
        assert gw.stop() == 0


def test_page_reconnects_by_itself_after_gateway_restart(tab, topic, protocol):
    gw = Gateway(f"restart-{protocol}", tls=protocol == "http2").start()
    try:
        tab.console.allow(REFUSED, "the page's EventSources and /metrics poll retry while the gateway is down")
        requests = []
        tab.page.on("request", lambda r: requests.append(r) if f"/events/{topic}" in r.url else None)
        tab.open(gw.url(), f"topic={topic}&subscribe=both")
        tab.wait_status("state", "open")
        tab.wait_status("events", "open")
        gw.publish("state", topic, "before restart")
        gw.publish("events", topic, "e1")
        gw.publish("events", topic, "e2")
        tab.wait_entries(2)

        port = gw.port
        assert gw.stop() == 0, "SIGTERM ends the gateway cleanly"
        # While it is down the page says so, and keeps trying (failed attempts shown).
        for channel in ("state", "events"):
            tab.wait_js("c => { const s = document.getElementById(c + '-status');"
                        " return s.dataset.state === 'reconnecting' && Number(s.dataset.attempts) >= 1 &&"
                        " getComputedStyle(s, '::after').content.includes('failed'); }",
                        channel)
        gw.start()
        assert gw.port == port
        # Both streams drop, retry by themselves and come back: exactly one reconnect
        # each, however many attempts hit the closed port in between.
        for channel in ("state", "events"):
            tab.wait_js("c => document.getElementById(c + '-reconnects').dataset.count === '1' &&"
                        " document.getElementById(c + '-status').dataset.state === 'open'", channel, 15)

        # The restarted gateway starts empty: new values and events reach the page.
        gw.publish("state", topic, "after restart")
        assert gw.publish("events", topic, "after")["subscribers"] == 1
        tab.wait_js("() => document.getElementById('state-value').textContent === 'after restart'")
        wait_until(lambda: len(tab.entries()) == 3, 10, what="the event published after the restart")
        items = tab.log_items()
        assert [(i["kind"], i["data"].get("id")) for i in items] == \
            [("entry", "1"), ("entry", "2"), ("marker", None), ("entry", "1")]
        assert items[2]["data"]["kind"] == "reconnect" and items[2]["data"]["after"] == "2"
        # The browser resumed with Last-Event-ID (the new gateway has no such id yet, so
        # it treats it as absent, API.md); the first request had none.
        sent = [r.all_headers().get("last-event-id") for r in requests]
        assert sent[0] is None and sent[-1] == "2", sent
        tab.console.assert_clean()
    finally:
        gw.stop()


def test_events_resume_from_last_event_id_without_loss(tab, topic):
    """The page's connection is cut (by a proxy, as a network would) while the gateway
    keeps running; events published meanwhile are in the replay window, and the page
    must get each of them exactly once, in order, when it reconnects."""
    gw = Gateway("resume").start()
    proxy = Proxy(gw.port)
    try:
        tab.console.allow(rf"ERR_INCOMPLETE_CHUNKED_ENCODING @ {re.escape(proxy.url('events/'))}",
                          "the proxy cuts the page's event stream mid-response, on purpose")
        tab.open(proxy.url(), f"topic={topic}&subscribe=events")
        tab.wait_status("events", "open")
        for n in range(1, 4):
            gw.publish("events", topic, f"live {n}")
        tab.wait_entries(3)

        proxy.cut()
        tab.wait_status("events", "reconnecting")
        # The gateway has seen the page go (API.md: gauges settle within a second) ...
        wait_until(lambda: gw.metrics()['sse_gateway_subscribers{channel="events"}'] == 0, 5,
                   what="the gateway to drop the cut subscriber")
        for n in range(4, 9):
            # ... so nobody is subscribed while these are published: only the window holds them.
            assert gw.publish("events", topic, f"while away {n}")["subscribers"] == 0
        proxy.restore()

        tab.wait_status("events", "open")
        entries = tab.wait_entries(8)
        assert gw.publish("events", topic, "live 9")["subscribers"] == 1
        entries = tab.wait_entries(9)
        assert [e["data"]["id"] for e in entries] == [str(n) for n in range(1, 10)]
        assert [e["value"] for e in entries] == [
            "live 1", "live 2", "live 3", *[f"while away {n}" for n in range(4, 9)], "live 9"]
        kinds = [i["kind"] for i in tab.log_items()]
        assert kinds == ["entry"] * 3 + ["marker"] + ["entry"] * 6, kinds
        assert not tab.page.is_visible("#gap-mark")
        assert tab.text("#events-reconnects") == "1"

        events_requests = [h for h in proxy.request_heads if h.startswith(f"GET /events/{topic} ")]
        assert len(events_requests) == 2
        assert header(events_requests[0], "Last-Event-ID") is None
        assert header(events_requests[1], "Last-Event-ID") == "3"
        tab.console.assert_clean()
    finally:
        proxy.close()
        gw.stop()


def test_several_topics_in_one_stream_resume_without_duplicates(tab, topic):
    """Three topics typed in are followed in one stream per channel; the log names each
    event's topic and its id there. The page's connection is cut while the gateway keeps
    running; on reconnect the browser sends the stream's cursor and every topic resumes
    from its own position: each value of each topic exactly once, in order."""
    topics = [f"{topic}/a", f"{topic}/b", f"{topic}/c"]
    gw = Gateway("several").start()
    proxy = Proxy(gw.port)
    try:
        tab.console.allow(rf"ERR_INCOMPLETE_CHUNKED_ENCODING @ {re.escape(proxy.url('events?'))}",
                          "the proxy cuts the page's event stream mid-response, on purpose")
        gw.publish("state", topics[1], "b's state")
        tab.open(proxy.url(), "topic=" + ",".join(topics) + "&subscribe=events")
        tab.wait_status("events", "open")
        for n in range(1, 3):
            for name in topics:
                gw.publish("events", name, f"{name} live {n}")
        tab.wait_entries(6)

        proxy.cut()
        tab.wait_status("events", "reconnecting")
        wait_until(lambda: gw.metrics()['sse_gateway_subscribers{channel="events"}'] == 0, 5,
                   what="the gateway to drop the cut subscriber")
        for n in range(3, 5):
            for name in reversed(topics):
                assert gw.publish("events", name, f"{name} away {n}")["subscribers"] == 0
        proxy.restore()

        tab.wait_status("events", "open")
        tab.wait_entries(12)
        assert gw.publish("events", topics[0], "last")["subscribers"] == 1
        entries = tab.wait_entries(13)
        for name in topics:
            mine = [e for e in entries if e["data"]["topic"] == name]
            assert [e["data"]["id"] for e in mine] == [str(n) for n in range(1, 5 + (name == topics[0]))], name
            assert [e["value"] for e in mine][:4] == [f"{name} live 1", f"{name} live 2", f"{name} away 3", f"{name} away 4"]
        assert entries[-1]["data"]["cursor"] == "5.4.4"
        assert tab.text("#events-last-id") == "5.4.4"
        assert not tab.page.is_visible("#gap-mark")
        assert [i["kind"] for i in tab.log_items()].count("marker") == 1, "one reconnect marker, nothing skipped"

        events_requests = [h for h in proxy.request_heads if h.startswith("GET /events?")]
        assert len(events_requests) == 2
        assert events_requests[0].startswith("GET /events?topic=" + "&topic=".join(t.replace("/", "%2F") for t in topics) + " ")
        assert header(events_requests[0], "Last-Event-ID") is None
        assert header(events_requests[1], "Last-Event-ID") == "2.2.2"

        # /state of the same topics: one card per topic in topic order, b's current value in its own.
        tab.page.click("#subscribe-state")
        tab.wait_status("state", "open")
        tab.wait_js("() => document.querySelector('#state-cards [data-empty=\"false\"]') !== null")
        cards = state_cards(tab)
        assert [c["topic"] for c in cards] == topics
        assert [c["value"] for c in cards] == ["no value yet", "b's state", "no value yet"]
        assert cards[1]["id"] == "1"
        tab.console.assert_clean()
    finally:
        proxy.close()
        gw.stop()


def state_cards(tab) -> list[dict]:
    """The several-topic state cards as shown: topic, id, value, empty, in page order."""
    return tab.page.eval_on_selector_all("#state-cards > li.state-card", """cards => cards.map(c => ({
        topic: c.dataset.topic, id: c.dataset.id || '', empty: c.dataset.empty,
        shownTopic: c.querySelector('.topic-name').innerText,
        value: c.querySelector('.value').innerText,
        visible: c.getBoundingClientRect().height > 0,
    }))""")


def test_several_topic_state_shows_every_topics_current_value(gateway, tab, topic):
    """Ten sensors on one /state stream: ten cards in the order typed, each with its
    topic's current value; a change to one topic changes its card only, and the others
    keep theirs (the page used to show only the newest value of whichever changed last).
    One topic again: the single value box is back and the cards are gone."""
    sensors = [f"{topic}/sensor-{n}" for n in range(10)]
    for n, name in enumerate(sensors):
        if n != 7:  # sensor-7 has no value yet
            gateway.publish("state", name, f"{20 + n} °C")
    gateway.publish("state", sensors[3], "superseded")
    gateway.publish("state", sensors[3], "23.5 °C")

    tab.open(gateway.url(), "topic=" + ",".join(sensors) + "&subscribe=state")
    tab.wait_status("state", "open")
    tab.wait_js("() => document.querySelectorAll('#state-cards [data-empty=\"false\"]').length === 9")
    assert not tab.page.is_visible("#state-box")
    cards = state_cards(tab)
    assert [c["topic"] for c in cards] == sensors
    assert [c["shownTopic"] for c in cards] == sensors
    expected = [f"{20 + n} °C" for n in range(10)]
    expected[3] = "23.5 °C"
    expected[7] = "no value yet"
    assert [c["value"] for c in cards] == expected
    assert [c["empty"] for c in cards] == ["false"] * 7 + ["true"] + ["false"] * 2
    assert cards[3]["id"] == "3" and cards[0]["id"] == "1"
    assert all(c["visible"] for c in cards)

    # Live changes land in their own cards; the others keep their values.
    gateway.publish("state", sensors[7], "27 °C")
    tab.wait_js("() => document.querySelector('#state-cards [data-topic$=\"sensor-7\"]').dataset.empty === 'false'")
    cards = state_cards(tab)
    expected[7] = "27 °C"
    assert [c["value"] for c in cards] == expected
    gateway.publish("state", sensors[9], "30 °C")
    tab.wait_js("() => document.querySelector('#state-cards [data-topic$=\"sensor-9\"] .value').textContent === '30 °C'")
    expected[9] = "30 °C"
    assert [c["value"] for c in state_cards(tab)] == expected
    tab.page.screenshot(path=str(ARTIFACTS / "state-cards.png"), full_page=True)

    # Back to one topic: the value box, no cards.
    tab.page.fill("#topic", sensors[2])
    tab.page.click("#subscribe-state")
    tab.wait_status("state", "open")
    tab.wait_js("() => document.getElementById('state-value').dataset.empty === 'false'")
    assert tab.text("#state-value") == "22 °C"
    assert tab.page.is_visible("#state-box")
    assert state_cards(tab) == []
    tab.console.assert_clean()


def test_slow_subscriber_drop_resumes_with_visible_gap(tab, topic):
    """The gateway itself drops the page's stream: the page stops reading (the proxy
    stalls it) until its queue overflows. On reconnect it resumes from Last-Event-ID;
    what already left the replay window is announced by a gap event and marked, and
    every event still held in the window arrives, in order."""
    window = 3
    gw = Gateway("slow", "--events-queue-limit", "8", "--replay-count", str(window)).start()
    proxy = Proxy(gw.port, upstream_rcvbuf=4096)
    try:
        tab.console.allow(rf"ERR_(INCOMPLETE_CHUNKED_ENCODING|CONNECTION_RESET) @ {re.escape(proxy.url('events/'))}",
                          "the gateway drops the stalled event stream mid-response, on purpose")
        tab.open(proxy.url(), f"topic={topic}&subscribe=events")
        tab.wait_status("events", "open")
        gw.publish("events", topic, "before the stall")
        tab.wait_entries(1)

        proxy.stall_events(True)
        published = 1
        body = "x" * 8192
        disconnects = 'sse_gateway_slow_subscriber_disconnects_total'
        while gw.metrics()[disconnects] == 0:
            assert published < 2000, "the gateway never dropped the stalled subscriber"
            gw.publish_burst("events", topic, [f"{n} {body}" for n in range(published + 1, published + 51)])
            published += 50
        assert gw.metrics()[disconnects] == 1
        proxy.stall_events(False)

        tab.wait_js("() => !document.getElementById('gap-mark').hidden", timeout=15)
        tab.wait_status("events", "open")
        items = wait_until(lambda: _items_if_window_arrived(tab, published), 15,
                           what="the replay window after the gap")
        gap_at = next(i for i, item in enumerate(items) if item["kind"] == "gap")
        before = [item for item in items[:gap_at] if item["kind"] == "entry"]
        after = [item for item in items[gap_at + 1:] if item["kind"] == "entry"]
        received = len(before)
        # Before the drop: 1..j, each once, in order (the drop cost no reordering).
        assert [e["data"]["id"] for e in before] == [str(n) for n in range(1, received + 1)]
        # The gap names the first id the page can no longer have: j + 1 ...
        first_missing = str(received + 1)
        assert items[gap_at]["data"] == {"id": "", "event": "gap"}
        assert items[gap_at]["value"] == f"gap: first missing id {first_missing}"
        assert tab.attr("#gap-mark", "data-first-missing") == first_missing
        # ... and everything the window still held follows, in order, exactly once.
        assert [e["data"]["id"] for e in after] == [str(n) for n in range(published - window + 1, published + 1)]
        assert all(e["value"].startswith(e["data"]["id"] + " ") for e in after)
        assert items[gap_at - 1]["kind"] == "marker" and items[gap_at - 1]["data"]["after"] == str(received)
        assert tab.text("#events-reconnects") == "1"
        events_requests = [h for h in proxy.request_heads if h.startswith(f"GET /events/{topic} ")]
        assert header(events_requests[-1], "Last-Event-ID") == str(received)
        tab.console.assert_clean()
    finally:
        proxy.close()
        gw.stop()


def _items_if_window_arrived(tab, last_id):
    items = tab.log_items()
    ids = [i["data"].get("id") for i in items if i["kind"] == "entry"]
    return items if ids and ids[-1] == str(last_id) else None


def test_no_console_errors_in_normal_use(gateway, tab, topic):
    """A person's session: type a topic, subscribe with the keyboard, publish both
    kinds, switch topics, stop and resubscribe, clear the log, let the chart poll
    /metrics — without one console error or warning, and nothing failing to load."""
    failed = []
    # EventSource.close() (switching topics, Stop all) aborts its request: that is the
    # page ending a stream, not a failure.
    tab.page.on("requestfailed", lambda r: None if r.failure == "net::ERR_ABORTED" and
                re.search(r"/(state|events)/", r.url) else failed.append((r.url, r.failure)))
    bad = []
    tab.page.on("response", lambda r: bad.append((r.url, r.status)) if r.status >= 400 else None)

    tab.open(gateway.url())
    tab.page.fill("#topic", topic)
    tab.page.press("#topic", "Enter")
    tab.wait_status("state", "open")
    tab.wait_status("events", "open")
    tab.page.fill("#publish-body", "line one\nline two")
    tab.page.click("#publish-button")
    tab.page.select_option("#publish-channel", "state")
    tab.page.click("#publish-button")
    tab.wait_entries(1)
    tab.wait_js("() => document.getElementById('state-value').dataset.empty === 'false'")

    tab.page.fill("#topic", topic + "/other")
    tab.page.press("#topic", "Enter")
    tab.wait_js("() => document.getElementById('events-path').textContent.endsWith('/other')")
    assert tab.entries() == [], "a new topic clears the log"
    tab.page.click("#unsubscribe")
    tab.wait_status("events", "idle")
    tab.page.click("#subscribe-events")
    tab.wait_status("events", "open")
    tab.page.click("#events-clear")
    tab.page.fill("#topic", "not valid!")
    tab.page.press("#topic", "Enter")
    assert tab.page.is_visible("#topic-error")

    # The chart polls /metrics once a second: wait for two readings.
    tab.wait_js("() => /^\\d+$/.test(document.getElementById('connections-now').textContent)", timeout=5)
    time.sleep(1.2)
    assert tab.text("#metrics-status") == ""
    assert failed == [] and bad == [], (failed, bad)
    tab.console.assert_clean()


def test_phone_width_has_no_horizontal_scroll(gateway, browser, topic):
    context = browser.new_context(viewport={"width": 360, "height": 800}, device_scale_factor=2,
                                  is_mobile=True, has_touch=True, ignore_https_errors=True)
    try:
        page = context.new_page()
        page.goto(gateway.url() + f"?topic={topic}&subscribe=both")
        page.wait_for_function("() => document.getElementById('events-status').dataset.state === 'open'")
        gateway.publish("state", topic, '{"temperature": 21.5, "humidity": 40, "note": "a long value wraps'
                        ' instead of widening the page"}')
        gateway.publish("events", topic, "x" * 300)
        page.wait_for_function("() => document.querySelectorAll('#events-log .entry').length === 1")
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"page is {width[0]}px wide in a {width[1]}px viewport"
        page.screenshot(path=str(ARTIFACTS / "page-phone.png"), full_page=True)
    finally:
        context.close()


def test_screenshot_with_live_data(gateway, tab):
    """Not a check of behaviour: leaves .build/browser-artifacts/page.png for a person
    (CI artefact). STREAMS_UPDATE_DOCS_SCREENSHOT=1 also refreshes docs/page.png."""
    topic = "sensors/room-1"
    tab.page.set_viewport_size({"width": 1200, "height": 1000})
    tab.open(gateway.url(), f"topic={topic}&events=reading,alert&subscribe=both")
    tab.wait_status("events", "open")
    tab.wait_status("state", "open")

    stop = threading.Event()

    def traffic():
        n = 0
        while not stop.is_set():
            n += 1
            gateway.publish("events", topic, f'{{"sensor":"t{n % 3}","celsius":{20 + (n * 7) % 30 / 10:.1f}}}',
                            event="reading")
            if n % 7 == 0:
                gateway.publish("events", topic, "door opened\nby badge 0042", event="alert")
            time.sleep(0.05 + (n % 10) * 0.02)

    worker = threading.Thread(target=traffic, daemon=True)
    worker.start()
    try:
        gateway.publish("state", topic, "temperature 21.4 °C\nhumidity 38 %\nwindow closed")
        time.sleep(5)
    finally:
        stop.set()
        worker.join()
    tab.page.fill("#publish-event", "alert")
    tab.page.fill("#publish-body", "window opened")
    tab.page.click("#publish-button")
    tab.wait_js("() => document.getElementById('publish-result').dataset.status === '200'")
    time.sleep(1.1)  # one more chart tick
    path = ARTIFACTS / "page.png"
    tab.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 20_000
    if os.environ.get("STREAMS_UPDATE_DOCS_SCREENSHOT") == "1":
        (ROOT / "docs").mkdir(exist_ok=True)
        shutil.copyfile(path, ROOT / "docs" / "page.png")
    tab.console.assert_clean()
