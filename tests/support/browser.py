"""The real app in a real browser, for the browser tests: a served PlanBoard and chromium.

``serve_app`` starts ``streamlit run app.py`` on a free local port with the given
PLANBOARD_HOME and no API key; ``launch_chromium`` drives Debian's chromium
(/usr/bin/chromium, never a downloaded browser) with Playwright, and ``open_tab`` opens a
page in it (in a fresh context, or among a shared context's tabs). Every context of it
prefers reduced motion.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import REPO
from tests.support.waiting import wait_until

__all__ = ["CHROMIUM", "GRAPH", "MIN_GAP_PX", "PLAN_TABLE", "SCRIPT_IDLE_JS", "SLACK_PX",
           "VIEWPORT", "WAIT_MS", "button", "cut_phases", "free_port", "generate_scenario",
           "launch_chromium", "needs_chromium", "open_sidebar_section", "open_tab", "serve_app"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
WAIT_MS = 30_000
VIEWPORT = {"width": 1280, "height": 720}  # the README's screenshots
GRAPH = "iframe[title='ui.graph_view.plan_graph']"  # the plan graph component's frame
PLAN_TABLE = "[class*='st-key-plan_editor_']"  # the Plan page's step table
MIN_GAP_PX = 4  # between a text's box and its node's border, left and right (about 8 drawn)
SLACK_PX = 0.5  # sub-pixel rounding of the boxes, above and below
# a JavaScript expression: true while no script run is under way (the attribute Streamlit's
# own end-to-end tests wait on; "initial" before the first run, "running" during one)
SCRIPT_IDLE_JS = ("document.querySelector(\"[data-testid='stApp']\")"
                  "?.getAttribute('data-test-script-state') === 'notRunning'")

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (.ci/run installs it)",
)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, server: subprocess.Popen, log: Path) -> None:
    def healthy() -> bool:
        if server.poll() is not None:
            raise AssertionError(f"streamlit exited early:\n{log.read_text('utf-8')}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                return answer.read().strip() == b"ok"
        except OSError:
            return False

    wait_until(healthy, what="streamlit to answer its health check", poll_s=0.1)


@contextlib.contextmanager
def serve_app(home: Path, log: Path, script: str = "app.py",
              exits: list[int] | None = None, base_path: str = "",
              options: list[str] | None = None,
              environment: dict[str, str] | None = None) -> Iterator[str]:
    """PlanBoard (offline: no key) on a free local port; yields its address.

    ``script`` (relative to the repository) is the page to serve: a test page under
    tests/apps/ instead of the app. ``exits`` gets the server's exit code once it stopped
    (``-SIGKILL`` when it did not stop within 15 s of SIGTERM). ``base_path``: served
    under it (``server.baseUrlPath``), as behind a proxy; the address includes it.
    ``options``: more of streamlit's own (``--secrets.files PATH``). ``environment``: more
    variables for the server's environment (a test toolset, its gate).
    """
    port = free_port()
    base = ["--server.baseUrlPath", base_path] if base_path else []
    base += options or []
    env = {**os.environ, **(environment or {}), "PLANBOARD_HOME": str(home)}
    with log.open("w", encoding="utf-8") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
             "--server.headless", "true", "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *base],
            cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}" + (f"/{base_path}" if base_path else "")
    try:
        _wait_healthy(url, server, log)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=15)
        if exits is not None:
            exits.append(server.returncode)


def _prefer_reduced_motion(browser: Any) -> None:
    """Every context ``browser`` opens from now on prefers reduced motion, as a person may
    ask their browser to (``reduced_motion="reduce"`` unless a test says otherwise): then
    Streamlit's elements enter without an animation and its spinners turn slower, where
    Chromium otherwise draws frame after frame while a script runs, on a loaded machine much
    of a test (a fifth of a page load's CPU: docs/test-suite-speed.md, issue 41). A test's
    own ``browser.new_context()`` too: Playwright has no such default for a whole browser,
    and ``context.browser`` is this same object."""
    def reduced(opener: Callable[..., Any]) -> Callable[..., Any]:
        def open_reduced(*args: Any, **options: Any) -> Any:
            options.setdefault("reduced_motion", "reduce")
            return opener(*args, **options)
        return open_reduced

    browser.new_context = reduced(browser.new_context)
    browser.new_page = reduced(browser.new_page)  # in a context of its own


@contextlib.contextmanager
def launch_chromium() -> Iterator[Any]:
    """Debian's chromium driven by Playwright, its contexts preferring reduced motion;
    closed on exit (the tests share one: see tests/browser/conftest.py)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        _prefer_reduced_motion(browser)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def open_tab(tabs: Any, url: str, viewport: dict[str, int] = VIEWPORT) -> Iterator[Any]:
    """A page opened on ``url`` and closed afterwards. ``tabs`` is a browser (the page gets
    a fresh context: no cookies, storage or cache shared with another test) or a browser
    context (a tab beside its others, sharing their cache of the app's scripts)."""
    tab = tabs.new_page()
    try:
        tab.set_viewport_size(viewport)
        tab.set_default_timeout(WAIT_MS)
        tab.goto(url)
        yield tab
    finally:
        tab.close()


def button(page, key: str):
    """The button of the widget keyed ``key``."""
    return page.locator(f".st-key-{key} button").first


def open_sidebar_section(page, title: str, inside: str) -> None:
    """Open the sidebar's expander titled ``title`` until ``inside`` (a selector in it) is
    visible: a click that lands while the first script run redraws the sidebar is lost."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    summary = page.locator("[data-testid='stSidebar'] summary").filter(has_text=title)
    shown = page.locator(inside)
    for _attempt in range(3):
        if not shown.is_visible():
            summary.click()
        try:
            shown.wait_for(state="visible", timeout=5_000)
            return
        except PlaywrightTimeout:
            continue
    shown.wait_for(state="visible", timeout=WAIT_MS)


def set_demo_pace(page, seconds: str, section: str = "Run options") -> None:
    """Open the sidebar's run options (titled ``section``) and type the demo pace; Enter
    commits it, and the field then shows it with two decimals."""
    open_sidebar_section(page, section, ".st-key-demo_pace input")
    pace = page.locator(".st-key-demo_pace input")
    pace.fill(seconds)
    pace.press("Enter")
    page.wait_for_function(
        "value => document.querySelector('.st-key-demo_pace input').value === value",
        arg=f"{float(seconds):.2f}")


def generate_scenario(page) -> None:
    """On the Plan page: pick the customer-service scenario and plan it offline; wait for
    the review (the table, "The plan is valid." and the graph's first node)."""
    button(page, "scenario_shop-refund").click()
    request = page.locator(".st-key-request textarea")
    page.wait_for_function(
        "el => el.value.includes('88231')", arg=request.element_handle(), timeout=WAIT_MS)
    button(page, "generate_plan").click()
    page.locator(PLAN_TABLE).first.wait_for()
    page.get_by_text("The plan is valid.").wait_for()
    page.frame_locator(GRAPH).locator("#canvas svg g.node").first.wait_for()


# Every phase's cluster: the room between its box and the edges of the view's visible area
# (left, right, top, bottom), and the least room between a line of its title and its
# border, in px.
_CLUSTERS = """() => {
  const view = document.getElementById('view');
  const area = view.getBoundingClientRect();
  const right = area.left + view.clientLeft + view.clientWidth;
  const bottom = area.top + view.clientTop + view.clientHeight;
  return [...view.querySelectorAll('g.cluster')].map(cluster => {
    const box = cluster.querySelector('path, polygon').getBoundingClientRect();
    const lines = [...cluster.querySelectorAll(':scope > text')]
      .map(t => t.getBoundingClientRect());
    return {id: cluster.id, title: Math.min(...lines.map(
              t => Math.min(t.left - box.left, box.right - t.right))),
            room: [box.left - area.left, right - box.right, box.top - area.top,
                   bottom - box.bottom]};
  });
}"""


def cut_phases(frame) -> list[str]:
    """The phases of the graph in ``frame`` that the view cuts off or whose title spills
    past its border, at the zoom it shows."""
    clusters = frame.locator("#view").evaluate(_CLUSTERS)
    assert clusters, "no phase drawn"
    return [f"{c['id']}: {', '.join(f'{r:.1f}' for r in c['room'])} px from the view's "
            f"left, right, top and bottom; title {c['title']:.1f} px from its border"
            for c in clusters if min(c["room"]) < -SLACK_PX or c["title"] < MIN_GAP_PX]
