"""Model and tool text cannot make the browser fetch anything (safe rendering).

A run is recorded the ordinary way (``python -m core run --plan FILE --yes --offline``)
from a plan whose goal, step descriptions and arguments hold Markdown images, an HTML
image and an autolink, all pointing at a local server that counts the requests it gets.
The run's page (request, step cards, errors, answer, reflection, graph) and the Plan
page (a blank plan whose goal is such a request) are opened in chromium: the server must
get no request. A control image loaded by the page itself proves that it would notice.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import ClassVar

import pytest

from core.cli.main import main as cli
from tests.support.browser import button, free_port, needs_chromium, open_tab, serve_app

pytestmark = needs_chromium


class _Counter(http.server.BaseHTTPRequestHandler):
    paths: ClassVar[list[str]] = []  # each server gets its own subclass and list

    def do_GET(self) -> None:
        self.paths.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        """Quiet: the test reads ``paths``."""


@pytest.fixture
def counting_server() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server on a free port; yields its address and the paths asked of it."""
    handler = type("Counter", (_Counter,), {"paths": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", handler.paths
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _payload(host: str, name: str) -> str:
    return (f'![{name}]({host}/{name}.png) <img src="{host}/{name}-html.png"> '
            f"<{host}/{name}-autolink.png> ![{name}][ref]\n\n[ref]: {host}/{name}-ref.png")


def _record_run(host: str, tmp_path, capsys) -> str:
    """Run a hostile plan through the CLI, offline; the id of the run it recorded."""
    plan = {"goal": f"Sum {_payload(host, 'goal')}", "steps": [
        {"id": "s1", "description": f"Add {_payload(host, 'desc')}", "tool": "calculate",
         "args": {"expression": "2+3"}},
        {"id": "s2", "description": f"Bad {_payload(host, 'error')}", "tool": "calculate",
         # a reference: the plan passes validation and the step fails when it runs
         "args": {"expression": f"{{{{s1.value}}}} + ![x]({host}/arg.png)"},
         "depends_on": ["s1"]},
        {"id": "s3", "description": f"Summarise {_payload(host, 'sum')}",
         "depends_on": ["s1"]},
    ]}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    cli(["run", f"Sum {_payload(host, 'request')}", "--plan", str(path), "--yes",
         "--offline", "--json"])
    run = json.loads(capsys.readouterr().out)
    assert f"{host}/error.png" in run["answer"]  # the answer repeats hostile text too
    return run["run_id"]


def test_hostile_text_makes_the_browser_fetch_nothing(counting_server, isolated_environment,
                                                       tmp_path, capsys, request):
    host, asked = counting_server
    run_id = _record_run(host, tmp_path, capsys)
    assert asked == []
    browser = request.getfixturevalue("browser")  # after the run: see tests/browser/conftest.py
    with (serve_app(isolated_environment, tmp_path / "streamlit.log") as url,
          open_tab(browser, f"{url}/run?run={run_id}", {"width": 1440, "height": 1000}) as page):
        answer = page.locator(".st-key-run_answer")
        answer.get_by_text("2+3 = 5").wait_for()
        tabs = page.locator(".st-key-run_tabs [role='tab']")
        tabs.filter(has_text="Dependency graph").click()  # a tab is drawn while it is open
        page.frame_locator("iframe[title='ui.graph_view.plan_graph']").locator(
            "svg").first.wait_for(state="attached")
        tabs.filter(has_text="Timeline").click()
        page.locator(".st-key-run_timeline").first.wait_for()
        tabs.filter(has_text="Steps").click()
        page.locator(".st-key-step_card_s2").get_by_text("error.png").first.wait_for()
        shown = answer.inner_text().replace("\u2060", "")  # the joiner that breaks a tag
        assert f'<img src="{host}/error-html.png">' in shown  # shown as text, not fetched

        page.goto(url)
        request = page.locator(".st-key-request textarea")
        request.fill(f"Plan {_payload(host, 'plan')}")
        request.press("ControlOrMeta+Enter")  # a text area sends its value on Ctrl+Enter
        button(page, "blank_plan").click()
        page.locator("[class*='st-key-plan_editor_']").first.wait_for()
        page.get_by_text(f"{host}/plan.png").first.wait_for()
        page.wait_for_timeout(1_500)  # time for any image the page holds to be asked for
        assert asked == []

        page.evaluate("src => { new Image().src = src; }", f"{host}/control.png")
        page.wait_for_function(
            "() => performance.getEntriesByType('resource')"
            ".some(e => e.name.endsWith('/control.png'))")
    assert asked == ["/control.png"]
