"""Fixtures: one headless Debian chromium for the session, gateways, and a page
that records every console message and uncaught exception of the browser tab."""
from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from harness import ARTIFACTS, Gateway

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
_topics = itertools.count(1)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found (Tests/browser/run.sh checks for it first)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        # Debian's chromium, never a downloaded one. Playwright passes --no-sandbox
        # (needed as root) and --headless; nothing leaves 127.0.0.1.
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="module", params=["http1", "http2"])
def gateway(request):
    """A gateway with default limits, shared by a module's tests (each uses its own topic);
    every test that takes it runs twice: over plain HTTP/1.1, and over HTTPS where the
    browser speaks HTTP/2 (ALPN h2) with it."""
    gw = Gateway(f"shared-{request.param}", tls=request.param == "http2").start()
    yield gw
    assert gw.stop() == 0


@pytest.fixture(params=["http1", "http2"])
def protocol(request) -> str:
    """For a test that starts its own gateway: it runs twice, over plain HTTP/1.1 and
    over HTTPS where the browser speaks HTTP/2 (ALPN h2). (The tests behind `Proxy`
    stay on HTTP/1.1: the proxy reads and stalls HTTP/1.1 request heads.)"""
    return request.param


@pytest.fixture
def topic(request) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name).strip("-")
    return f"browser/{name}-{next(_topics)}"


class ConsoleLog:
    """Console messages and page errors of one tab. Errors and warnings fail the test
    unless the test allowed them by pattern, saying why (network errors it causes)."""

    def __init__(self, page: Page):
        self.messages: list[dict] = []
        self.allowed: list[tuple[re.Pattern, str]] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.messages.append(
            {"type": "pageerror", "text": str(error), "url": ""}))

    def _on_console(self, message):
        location = message.location or {}
        self.messages.append({"type": message.type, "text": message.text, "url": location.get("url", "")})

    def allow(self, pattern: str, reason: str) -> None:
        # (Over HTTP/2 the browser logs "status of 401 ()": the protocol has no reason phrase.)
        self.allowed.append((re.compile(pattern), reason))

    def problems(self) -> list[dict]:
        found = []
        for message in self.messages:
            if message["type"] not in ("error", "warning", "pageerror"):
                continue
            line = f'{message["text"]} @ {message["url"]}'
            if message["type"] != "pageerror" and any(p.search(line) for p, _ in self.allowed):
                continue
            found.append(message)
        return found

    def assert_clean(self) -> None:
        problems = self.problems()
        assert not problems, "console errors/warnings:\n" + "\n".join(json.dumps(p) for p in problems)


class Tab:
    """A browser tab on the page, with helpers that read the page's documented ids."""

    def __init__(self, page: Page, console: ConsoleLog):
        self.page = page
        self.console = console

    def open(self, base_url: str, query: str = "") -> "Tab":
        self.page.goto(base_url + ("?" + query if query else ""))
        return self

    def text(self, selector: str) -> str:
        return self.page.locator(selector).text_content() or ""

    def attr(self, selector: str, name: str) -> str | None:
        return self.page.locator(selector).get_attribute(name)

    def wait_js(self, expression: str, arg=None, timeout: float = 10.0):
        """Waits until the JS function `expression` returns truthy; returns its value."""
        handle = self.page.wait_for_function(expression, arg=arg, timeout=timeout * 1000, polling=50)
        return handle.json_value()

    def wait_status(self, channel: str, state: str, timeout: float = 10.0):
        self.wait_js("([c, s]) => document.getElementById(c + '-status').dataset.state === s",
                     [channel, state], timeout)

    def log_items(self) -> list[dict]:
        """#events-log oldest first: entries and markers with their data attributes."""
        return self.page.eval_on_selector_all("#events-log > li", """items => items.reverse().map(li => ({
            kind: li.classList.contains('marker') ? 'marker' : (li.classList.contains('gap') ? 'gap' : 'entry'),
            data: Object.assign({}, li.dataset),
            value: li.querySelector('.data') ? li.querySelector('.data').textContent : li.textContent,
            shown: li.querySelector('.id') ? li.querySelector('.id').textContent : null,
        }))""")

    def entries(self) -> list[dict]:
        return [item for item in self.log_items() if item["kind"] == "entry"]

    def wait_entries(self, count: int, timeout: float = 10.0) -> list[dict]:
        self.wait_js("n => document.querySelectorAll('#events-log > li.entry:not(.gap)').length >= n",
                     count, timeout)
        return self.entries()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "report_" + report.when, report)


@pytest.fixture
def tab(browser, request):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, ignore_https_errors=True)
    page = context.new_page()
    console = ConsoleLog(page)
    yield Tab(page, console)
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
        try:
            page.screenshot(path=str(ARTIFACTS / f"failed-{name}.png"), full_page=True)
            (ARTIFACTS / f"failed-{name}.console.json").write_text(json.dumps(console.messages, indent=1))
        except Exception:  # the page may be gone; the test's own failure says enough
            pass
    context.close()

