"""Model and tool text cannot make the browser fetch anything (safe rendering), and a stray
click cannot turn safety off.

A run is recorded the ordinary way (``python -m core run --plan FILE --yes --offline``)
from a plan whose goal, step descriptions and arguments hold Markdown images, an HTML
image and an autolink, all pointing at a local server that counts the requests it gets.
The run's page (request, step cards, errors, answer, reflection, graph) and the Plan
page (a blank plan whose goal is such a request) are opened in chromium: the server must
get no request. A control image loaded by the page itself proves that it would notice.

The review's safety (issue 44): a click on the "?" of a sidebar switch leaves every switch
as it was, and turning confirmation of side effects off takes a second act, after which the
run page says it is off; issue 44's mixed request, planned in phases, plans one refund and
shows every phase at the default zoom; a refund whose order_id reads s1's result asks for
confirmation showing the order s1 found; one approval of a plan version starts one run,
from two tabs at once or a second click.

Every test here uses the one app served for the module (on the module's home): the hostile
run is recorded into that home before the app starts. The two tests that only read the Plan
page (the switches' help, the mixed request's phases) share one tab of it: each load of the
app costs Chromium seconds of CPU.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from core.cli.main import main as cli
from core.store.run_store import RunStore
from tests.support.browser import (
    GRAPH,
    SCRIPT_IDLE_JS,
    button,
    cut_phases,
    free_port,
    needs_chromium,
    open_sidebar_section,
    open_tab,
)

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


def test_hostile_text_makes_the_browser_fetch_nothing(counting_server, module_home, monkeypatch,
                                                       tmp_path, capsys, request):
    host, asked = counting_server
    monkeypatch.setenv("PLANBOARD_HOME", str(module_home))  # the module's served app shows it
    run_id = _record_run(host, tmp_path, capsys)
    assert asked == []
    # after the run (see tests/browser/conftest.py): the module's chromium and served app
    url, browser = request.getfixturevalue("served_app"), request.getfixturevalue("browser")
    with open_tab(browser, f"{url}/run?run={run_id}", {"width": 1440, "height": 1000}) as page:
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


# ---- a review you can trust -------------------------------------------------------------


@pytest.fixture(scope="module")
def review(served_app, module_home, tabs) -> Iterator[tuple[str, Any, RunStore]]:
    """The module's served app, the tabs of the module's chromium, and the store of the
    module's home (read only)."""
    module_home.mkdir(parents=True, exist_ok=True)
    store = RunStore(f"sqlite:///{module_home / 'planboard.db'}")
    try:
        yield served_app, tabs, store
    finally:
        store.close()


@pytest.fixture(scope="module")
def plan_tab(review) -> Iterator[Any]:
    """One tab on the Plan page for the tests that only read it (they change no setting)."""
    url, tabs, _store = review
    with open_tab(tabs, url) as page:
        yield page


# the key of each switch: the st-key-<key> class of the element it is drawn in
_KEYS_JS = """switches => switches.map(s => [...s.closest("[class*='st-key-']").classList]
    .find(c => c.startsWith('st-key-')).slice('st-key-'.length))"""


def _sidebar_switches(page, expected: set[str]) -> list[str]:
    """The keys of the sidebar's switches once its script run is over and ``expected`` are
    among them: read while a run still draws the sidebar, the list can miss a switch (CI
    once saw no offline_mode). Fails naming the keys found when ``expected`` never are."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    found = page.locator("[data-testid='stSidebar'] [data-testid='stCheckbox']")
    try:
        page.wait_for_function(
            f"""expected => {{
                const keys = ({_KEYS_JS})([...document.querySelectorAll(
                    "[data-testid='stSidebar'] [data-testid='stCheckbox']")]);
                return {SCRIPT_IDLE_JS} && expected.every(key => keys.includes(key));
            }}""", arg=sorted(expected))
    except PlaywrightTimeout:
        raise AssertionError(f"sidebar switches {found.evaluate_all(_KEYS_JS)}, "
                             f"expected {sorted(expected)} among them") from None
    return found.evaluate_all(_KEYS_JS)


def _checked(page, key: str) -> bool:
    return page.locator(f".st-key-{key} input").is_checked()


def test_a_click_on_a_switchs_help_leaves_every_switch_as_it_was(plan_tab, tmp_path):
    page = plan_tab
    try:
        open_sidebar_section(page, "Run options", ".st-key-confirm_side_effects input")
        # every switch the sidebar draws, read once the script run has drawn them all
        keys = _sidebar_switches(page, {"offline_mode", "confirm_side_effects",
                                        "read_ahead"})
        before = {key: _checked(page, key) for key in keys}
        for key in keys:
            page.locator(f".st-key-switch_{key} [data-testid='stTooltipIcon'], "
                         f".st-key-{key} [data-testid='stTooltipIcon']").first.click()
        page.wait_for_timeout(1_000)  # time for a rerun the clicks might have caused
        assert {key: _checked(page, key) for key in keys} == before
        assert page.locator("[class*='st-key-widen_']").count() == 0
    except Exception:
        page.screenshot(path=str(tmp_path / "failure.png"))
        raise


def test_turning_confirmation_off_takes_a_second_act_and_the_run_says_it_is_off(review,
                                                                                tmp_path):
    url, tabs, _store = review
    with open_tab(tabs, url) as page:
        try:
            open_sidebar_section(page, "Run options", ".st-key-confirm_side_effects input")
            page.locator(".st-key-confirm_side_effects label").click()  # the switch itself
            asked = page.locator(".st-key-widen_confirm_side_effects")
            asked.get_by_text("run without asking you first").wait_for()
            assert _checked(page, "confirm_side_effects")  # not off before the second act
            button(page, "widen_confirm_side_effects_yes").click()
            asked.wait_for(state="detached")
            assert not _checked(page, "confirm_side_effects")
            page.get_by_text("Off: side effects run without asking you.").wait_for()

            button(page, "scenario_ops-health").click()  # read-only: nothing is changed
            page.wait_for_function(
                "() => document.querySelector('.st-key-request textarea').value"
                ".includes('micro-services')")
            button(page, "generate_plan").click()
            page.get_by_text("The plan is valid.").wait_for()
            page.locator(".st-key-approve_note").get_by_text(
                "No step of this plan has a side effect.").wait_for()
            approve = button(page, "approve_run")
            approve.scroll_into_view_if_needed()
            approve.click()
            page.wait_for_url(re.compile(r"/run\?run=\w+"))
            page.locator(".st-key-run_safety").get_by_text(
                "Confirmation of side effects is off for this run").wait_for()
        except Exception:
            page.screenshot(path=str(tmp_path / "failure.png"))
            raise


MIXED = "帮我查一下 order 88231 到了没, if delivered 就 refund it，然后 tell me the refund number"


def test_the_mixed_request_plans_one_refund_whose_phases_all_show(plan_tab):
    """Issue 44's request on the Plan page, in Phases, offline: one refund, every phase in
    sight at the default zoom."""
    page = plan_tab
    page.locator(".st-key-request textarea").fill(MIXED)
    page.locator(".st-key-plan_mode label").filter(has_text="Phases").click()
    button(page, "generate_plan").click()
    frame = page.frame_locator(GRAPH)
    frame.locator("#canvas svg g.cluster").first.wait_for()
    assert frame.locator("g.node", has_text="apply_refund").count() == 1
    assert frame.locator("g.cluster").count() == 3
    assert cut_phases(frame) == []


REFUND_REQUEST = "Check whether order 88231 has arrived, and if it has, refund the broken one."


def _plan(page, request: str) -> None:
    """Plan ``request`` offline in plan mode; wait for the review."""
    page.locator(".st-key-plan_mode label").filter(has_text=re.compile(r"^Plan$")).click()
    text = page.locator(".st-key-request textarea")
    text.fill(request)
    text.press("ControlOrMeta+Enter")  # a text area sends its value on Ctrl+Enter
    button(page, "generate_plan").click()
    page.get_by_text("The plan is valid.").wait_for()


def test_the_refund_card_shows_the_order_s1_found(review, tmp_path):
    """The refund's order_id set to s1's result in the step panel ("or use a result…"): the
    card asking for confirmation shows 88231, marked as s1's, in body type."""
    url, tabs, _store = review
    with open_tab(tabs, url) as page:
        try:
            _plan(page, REFUND_REQUEST)
            page.frame_locator(GRAPH).locator("g.node#step-s2").click()
            page.get_by_role("heading", name="Step s2").wait_for()
            page.locator(".st-key-step_ref_order_id").click()
            page.get_by_role("option", name="{{s1.order_id}}").click()
            page.wait_for_function(
                "() => [...document.querySelectorAll(\"[role='gridcell']\")]"
                ".some(cell => cell.textContent.includes('{{s1.order_id}}'))")
            approve = button(page, "approve_run")
            approve.scroll_into_view_if_needed()
            approve.click()
            page.wait_for_url(re.compile(r"/run\?run=\w+"))
            shown = page.locator(".st-key-decision_args_s2")
            shown.get_by_text("88231 ← s1.order_id").wait_for()
            assert "{{" not in shown.inner_text()
            # in the type of the step's description above it, not a caption's small grey
            look = "el => [getComputedStyle(el).fontSize, getComputedStyle(el).color]"
            value = shown.locator("p").filter(has_text="88231").first.evaluate(look)
            description = page.locator(".st-key-decision_s2 p").filter(
                has_text="request a refund").first.evaluate(look)
            assert value == description, (value, description)
            button(page, "reject_step_s2").click()  # nothing is refunded
            page.locator(".st-key-decision_s2").wait_for(state="detached")
        except Exception:
            page.screenshot(path=str(tmp_path / "failure.png"))
            raise


ONCE_REQUEST = "What is 17 * 23?"  # read-only: nothing waits for a person


def test_one_approval_of_a_version_starts_one_run_from_two_tabs_or_a_second_click(review,
                                                                                 tmp_path):
    """Two tabs review the same version and approve it at the same moment; then the tab that
    opened its run goes back to the Plan page and approves it again. The store holds one
    run: the other approvals say which run the version has, and offer to open it."""
    url, tabs, store = review
    with open_tab(tabs, url) as first, open_tab(tabs, url) as second:
        pages = (first, second)
        try:
            for page in pages:
                _plan(page, ONCE_REQUEST)
            approves = [button(page, "approve_run") for page in pages]
            for approve in approves:
                approve.scroll_into_view_if_needed()
            for approve in approves:  # both clicks sent before either page answers
                approve.click(no_wait_after=True)
            for page in pages:  # the run page, or the word that the version has a run
                page.locator(".st-key-run_safety, .st-key-version_run").first.wait_for()
            [run_id] = [r.run_id for r in store.list_runs() if r.request == ONCE_REQUEST]
            [opened] = [page for page in pages if "run=" in page.url]
            [told] = [page for page in pages if "run=" not in page.url]
            assert opened.url.endswith(f"run={run_id}")
            told.locator(".st-key-version_run").get_by_text(f"its run is {run_id}").wait_for()

            # a second click: back on the Plan page, the plan is still there
            opened.locator("[data-testid='stSidebarNav'] a").first.click()
            again = button(opened, "approve_run")
            again.scroll_into_view_if_needed(timeout=60_000)  # a page switch under load
            again.click()
            opened.locator(".st-key-version_run").get_by_text(
                f"its run is {run_id}").wait_for()
            button(told, "open_version_run").click()  # the other tab opens that run
            told.wait_for_url(re.compile(rf"/run\?run={run_id}$"))
            assert [r.run_id for r in store.list_runs() if r.request == ONCE_REQUEST] == [
                run_id]
        except Exception:
            for name, page in zip(("first", "second"), pages, strict=True):
                page.screenshot(path=str(tmp_path / f"failure-{name}.png"))
            raise
