"""The run page live, in Chromium: event → screen latency, and the demo holding up.

One PlanBoard is served for the module (offline, its own home); this test process runs
the runs over the same store and DBOS (as a second tab or a worker would), with its own
tools: ``gate`` holds the first step until the viewers are watching, ``echo`` returns at
once, ``refund`` is a side effect (it waits for a person's confirmation).

The latency test takes the issue's measurement (bench/live.py): a MutationObserver in each
viewer's page notes when each step card's status mark changes, in the machine's clock, and
each step's ``step_completed`` (and, with a demo pace, ``step_started``) time in the store
is subtracted. It asserts what does not depend on the machine's speed: every step's
completion reaches every viewer's card, for two viewers (what many viewers share, without
the page loads of the five and ten that bench.live times), with the demo pace off and on
(a paced ▶ lasts the pace only, so a missed one is reported, not failed) and in the
presentation view, in the page each viewer opened (never loaded or connected again). That a
change is read once for all viewers, not once per viewer, is tested in
tests/runs/test_live_views.py. The latencies are
printed with the machine's load and whether they meet the target (p50 ≤ 0.3 s, max ≤ 1 s);
``python -m bench.live`` judges the wall clock, since a test does not assert wall-clock
times.

No test here asserts a time either: how soon a key press confirms a step is measured by
``python -m bench.live --confirm``; here, that the key confirms the step while the page
holds its tick (that the held tick gives way to a waiting request is tested in
tests/ui/test_live_marks.py and tests/runs/test_live_views.py).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import bench.live as live
from core.execution.options import RunOptions
from core.llm.engine import Engine
from core.runs.runner import Runner
from core.store.run_store import RunStore
from tests.support.browser import (
    SCRIPT_IDLE_JS,
    VIEWPORT,
    button,
    needs_chromium,
    open_sidebar_section,
    serve_app,
)
from tests.support.waiting import DEFAULT_TIMEOUT_S

pytestmark = needs_chromium



@dataclass
class Served:
    home: Path
    url: str
    tabs: Any  # one browser context: its pages share the cache of the app's scripts


@pytest.fixture(scope="module")
def served(module_home, dbos_of_the_module) -> Iterator[Served]:
    """PlanBoard and Chromium for the module, over one home that this process shares."""
    with live.serve_and_browse(module_home, module_home.parent / "streamlit.log") as (
            url, browser):
        tabs = browser.new_context(viewport=VIEWPORT)
        try:
            yield Served(module_home, url, tabs)
        finally:
            tabs.close()


@pytest.fixture
def app(served, monkeypatch) -> Served:
    """The served app, with this test's PLANBOARD_HOME set back to the app's home."""
    monkeypatch.setenv("PLANBOARD_HOME", str(served.home))
    return served


@pytest.fixture
def served_runner(app) -> Iterator[Runner]:
    """A runner over the served app's home: its runs are the ones the pages show."""
    store = RunStore()
    made = Runner(store, poll_s=0.05)
    yield made
    made.shutdown()
    store.close()


def _page(app: Served, path: str = "") -> Any:
    page = app.tabs.new_page()
    page.set_default_timeout(30_000)
    page.add_init_script(f"({live.CARD_LOG_JS})()")
    page.goto(f"{app.url}{path}")
    return page


# The run page's ticker (ui.live_ticker): drawn while the run is live, and no longer once
# the page has rerun after the run's end (pages/run.py)
_TICKER = ".st-key-run_ticker"


def _wait_for_the_rerun_after_the_end(page: Any) -> None:
    """Wait until the page has rerun after its run settled and the rerun has ended."""
    page.locator(_TICKER).wait_for(state="detached")
    page.wait_for_function(SCRIPT_IDLE_JS)


def _address(page: Any) -> str:
    """The address bar's text (Playwright's ``page.url`` misses a replaced history entry)."""
    return page.evaluate("() => location.href")


def _gated_run(served_runner: Runner, gate: live.Gate, *, refund: bool = False,
               pace: float = 0.0) -> str:
    registry = live.gate_registry(gate)
    plan = live.with_refund(registry, live.gate_plan(3)) if refund else live.gate_plan(3)
    return served_runner.start(plan.goal, plan, engine=Engine(registry),
                        options=RunOptions(step_delay_s=pace, confirm_side_effects=refund),
                        settings_public={"offline": True})


# ---- event → screen --------------------------------------------------------------------


@pytest.mark.parametrize(("viewers", "pace", "present"),
                         [(2, 0.0, False), (2, 0.5, False), (2, 0.0, True)])
def test_a_recorded_step_change_reaches_every_viewers_card(app, viewers, pace, present):
    """The run page's cards, and the presentation view's graph."""
    sample = live.measure(app.tabs, app.url, viewers=viewers, pace=pace, chain=4,
                          present=present)
    print(f"viewers={viewers} pace={pace} present={present}: p50 {sample.p50:.3f} s, "
          f"max {sample.worst:.3f} s over {len(sample.all)} changes, missed {sample.missed}, "
          f"messages per viewer {sample.messages}, "
          f"target met: {live.meets_target(sample)}, load {sample.load}")
    # every step's ✓, on every screen: a final state stays until it is drawn, however slow
    # the machine (bench.live waits up to SETTLE_S for it); a paced ▶ lasts the pace only,
    # so one missed on a loaded machine is reported here and counted by bench.live, not failed
    assert not [m for m in sample.missed if m.endswith("✓")], sample.missed
    assert len(sample.completed) == viewers * 5
    assert sample.reloaded == []  # each change reached the page as it was open


def test_the_server_streams_a_runs_marks_over_http(app, served_runner):
    """app.py serves ui.live_marks' stream beside the dashboard: a followed run's marks as
    server-sent events until it settles; an unknown run is a 404."""
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{app.url}/api/runs/nope/steps", timeout=10)
    missing.value.close()  # its socket, which garbage collection would close in a later test
    assert missing.value.code == 404
    gate = live.Gate()
    run_id = _gated_run(served_runner, gate)
    with urllib.request.urlopen(f"{app.url}/api/runs/{run_id}/steps", timeout=30) as reply:
        assert reply.headers["Content-Type"].startswith("text/event-stream")
        marks = [json.loads(line.removeprefix(b"data: ")) for line in _lines(reply, gate)
                 if line.startswith(b"data: ")]
    assert marks[0]["steps"]["s1"] in ("pending", "running") and not marks[0]["settled"]
    assert marks[-1]["settled"] and set(marks[-1]["steps"].values()) == {"completed"}
    assert [m["seq"] for m in marks] == sorted(m["seq"] for m in marks)


def test_served_without_the_stream_the_tick_draws_the_marks_and_asks_once(app, served_runner,
                                                                          tmp_path):
    """``streamlit run dashboard.py`` (no app.py: no stream): the cards still follow the run
    with the tick, and the page asks for the missing stream once, not at every redraw."""
    with serve_app(app.home, tmp_path / "dashboard.log", script="dashboard.py") as url:
        gate = live.Gate()
        run_id = _gated_run(served_runner, gate)
        page = app.tabs.new_page()
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url)
                if "/api/runs/" in request.url else None)
        page.add_init_script(f"({live.CARD_LOG_JS})()")
        try:
            page.goto(f"{url}/run?run={run_id}")
            page.locator("[class*='st-key-step_card_s4'] strong").wait_for()
            gate.open()
            assert served_runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
            page.wait_for_function(
                "() => new Set(window.__cardLog.filter(e => e.mark === '✓')"
                ".map(e => e.id)).size === 4", timeout=30_000)
        finally:
            page.close()
    assert asked == [f"{url}/api/runs/{run_id}/steps"], asked


def _lines(reply: Any, gate: live.Gate) -> Iterator[bytes]:
    """The stream's lines until it ends; the gate opens once the first marks arrived."""
    for line in reply:
        if line.startswith(b"data: "):
            gate.open()
        yield line.rstrip(b"\n")


# ---- the demo holds ------------------------------------------------------------------


def test_the_presentation_view_stays_when_the_run_ends(app, served_runner, tmp_path):
    gate = live.Gate()
    run_id = _gated_run(served_runner, gate)
    page = _page(app, f"/run?run={run_id}")
    try:
        page.locator(".st-key-present_open button").first.click()
        page.locator(".st-key-present_view").wait_for()
        assert "present=1" in _address(page)
        page.locator(_TICKER).wait_for(state="attached")
        gate.open()
        assert served_runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
        page.locator(".st-key-present_view").get_by_text("Completed").wait_for()
        _wait_for_the_rerun_after_the_end(page)
        assert "present=1" in _address(page) and f"run={run_id}" in _address(page)
        assert page.locator(".st-key-present_view").is_visible()
        assert page.locator(".st-key-run_view").count() == 0
        assert not page.locator("[data-testid='stSidebar']").is_visible()
    except Exception:
        page.screenshot(path=str(tmp_path / "failure.png"))
        raise
    finally:
        page.close()


def test_a_finished_runs_page_first_draws_how_it_ended_and_keeps_the_demo_pace_on_refresh(
        app, served_runner):
    """The first drawing of a finished run's page shows every step as it ended (never a
    "○ Pending" first); a demo pace typed in the sidebar is kept in the address, so a
    refresh of the page (a load) keeps it. Both on one page: a load is what costs."""
    gate = live.Gate()
    gate.open()
    run_id = _gated_run(served_runner, gate)
    assert served_runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    page = _page(app, f"/run?run={run_id}")
    try:
        page.wait_for_function(  # every card's first mark noted
            "() => new Set(window.__cardLog.map(e => e.id)).size === 4")
        log = page.evaluate("() => window.__cardLog")
        open_sidebar_section(page, "Run options", ".st-key-demo_pace input")
        pace = page.locator(".st-key-demo_pace input")
        pace.fill("1.5")
        pace.press("Enter")
        _wait_address(page, "demo_pace=1.5")
        page.reload()
        open_sidebar_section(page, "Run options", ".st-key-demo_pace input")
        page.wait_for_function(
            "() => document.querySelector('.st-key-demo_pace input')?.value === '1.50'")
    finally:
        page.close()
    first = {}
    for entry in log:
        first.setdefault(entry["id"], entry["mark"])
    assert first == {f"s{n}": "✓" for n in range(1, 5)}, log


# Installed in the page: each card whose mark and status words disagree, as often as the
# page changes ("✓ Running": the card's mark is ✓ while its text says Running).
_DISAGREEING_CARDS_JS = """(words) => {
  const seen = window.__disagreeing = [];
  const prefix = 'st-key-step_card_';
  const scan = () => {
    for (const card of document.querySelectorAll(`[class*='${prefix}']`)) {
      const head = card.querySelector('strong');
      const mark = head && head.innerText.trim()[0];
      if (!words[mark]) continue;
      const said = Object.values(words).filter(word => card.innerText.includes(word));
      if (said.join() !== words[mark]) seen.push(`${mark} ${said.join('/')}`);
    }
  };
  new MutationObserver(scan).observe(document,
    {subtree: true, childList: true, characterData: true});
}"""
_WORDS = {"✓": "Completed", "▶": "Running", "○": "Pending", "✗": "Failed", "⏭": "Skipped"}


def test_a_cards_mark_and_status_word_change_together(app, served_runner):
    """Issue 44: a card showed "✓ s1" beside "▶ Running" for up to 2.4 s: the mark followed
    the run's stream, the status word the page's tick."""
    gate = live.Gate()
    run_id = _gated_run(served_runner, gate, pace=0.3)
    page = _page(app, f"/run?run={run_id}")
    try:
        page.locator("[class*='st-key-step_card_s4'] strong").wait_for()
        page.locator(_TICKER).wait_for(state="attached")
        page.evaluate(_DISAGREEING_CARDS_JS, _WORDS)
        gate.open()
        assert served_runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
        page.wait_for_function(
            "() => window.__cardLog.filter(e => e.mark === '✓').length >= 4")
        _wait_for_the_rerun_after_the_end(page)  # its redraw is watched too
        disagreeing = page.evaluate("() => window.__disagreeing")
        heads = page.locator("[class*='st-key-step_card_'] .planboard-step-head").all_inner_texts()
    finally:
        page.close()
    assert disagreeing == [], (disagreeing[:3], heads)
    assert [head.splitlines()[0] for head in heads] == [
        "✓ s1 Completed · gate", *(f"✓ s{n} Completed · echo" for n in range(2, 5))]


def test_a_run_approved_at_pace_0_is_drawn_as_it_ended_at_once(app, served_runner):
    """Through the plan page, as a new user would: every card of the finished run ends ✓
    and none is drawn "○ Pending" again once it showed ✓ (the first paint may come from a
    read made just before the end; how soon the marks arrive is bench.live's to measure)."""
    page = _page(app)
    try:
        page.locator(".st-key-scenario_ops-health button").first.click()
        page.wait_for_function(
            "() => document.querySelector('.st-key-request textarea').value.includes("
            "'micro-services')")
        page.locator(".st-key-generate_plan button").first.click()
        page.get_by_text("The plan is valid.").wait_for()
        approve = page.locator(".st-key-approve_run button").first
        approve.scroll_into_view_if_needed()
        approve.click()
        page.wait_for_url(re.compile(r"/run\?run=\w+"))
        run_id = re.search(r"run=(\w+)", page.url).group(1)
        assert served_runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
        page.wait_for_function(
            "() => window.__cardLog.filter(e => e.mark === '✓').length >= 5")
        log = page.evaluate("() => window.__cardLog")
    finally:
        page.close()
    ended = next(e.at for e in served_runner.store.events(run_id) if e.kind == "run_finished")
    shown: dict[str, str] = {}
    for entry in sorted(log, key=lambda e: e["at"]):
        assert shown.get(entry["id"]) != "✓" or entry["mark"] == "✓", (ended, log)
        shown[entry["id"]] = entry["mark"]
    assert len(shown) == 5 and set(shown.values()) == {"✓"}, (ended, log)


def test_a_pending_confirmation_is_in_view_and_answers_the_keyboard(app, served_runner, tmp_path):
    gate = live.Gate()
    gate.open()
    run_id = _gated_run(served_runner, gate, refund=True)
    assert served_runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True).status == (
        "waiting_confirmation")
    page = _page(app, f"/run?run={run_id}")
    try:
        confirm = page.locator(".st-key-confirm_step_s5 button")
        confirm.wait_for()
        page.wait_for_timeout(300)  # the page has settled
        for part in (page.locator(".st-key-decision_s5"), confirm):
            box = part.bounding_box()
            assert box is not None and box["y"] >= 0
            assert box["y"] + box["height"] <= VIEWPORT["height"], box  # no scrolling needed
        page.screenshot(path=str(tmp_path / "pending-confirmation.png"))
        page.wait_for_timeout(1_000)  # the page now holds a tick (pages/run.py HOLD_S = 5 s)
        page.locator("body").press("y")  # Confirm's shortcut
        assert served_runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
        assert any(e.kind == "confirmed" for e in served_runner.store.events(run_id))
        assert served_runner.store.get_run(run_id).plan.step("s5").status == "completed"
        page.locator(".st-key-decision_s5").wait_for(state="detached")
    except Exception:
        page.screenshot(path=str(tmp_path / "failure.png"))
        raise
    finally:
        page.close()


def test_the_chosen_language_survives_a_reload_a_page_switch_and_a_run_link(app, served_runner):
    """中文, once chosen (the page opened in English), stays: after a reload, after a button
    that switches pages, in a run link opened in another tab of the browser (the address
    names no language), and in a link that names it opened in a browser that never chose
    one."""
    gate = live.Gate()
    gate.open()
    run_id = _gated_run(served_runner, gate)
    assert served_runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    browser = app.tabs.browser
    chosen = browser.new_context(viewport=VIEWPORT)  # its cookies stay out of the others'
    stranger = browser.new_context(viewport=VIEWPORT)
    try:
        page = chosen.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{app.url}/history")
        page.get_by_role("heading", name="History").wait_for()
        page.locator(".st-key-language label").filter(has_text="中文").click()
        page.get_by_role("heading", name="历史").wait_for()
        _wait_address(page, "lang=zh")
        page.reload()
        page.get_by_role("heading", name="历史").wait_for()
        button(page, "history_open").click()  # st.switch_page to the run
        page.get_by_role("heading", name="运行").wait_for()
        page.get_by_text("已完成").first.wait_for()
        _wait_address(page, f"run={run_id}", "lang=zh")
        shared = _address(page)

        link = chosen.new_page()  # the command line's link: no language in it
        link.goto(f"{app.url}/run?run={run_id}")
        link.get_by_role("heading", name="运行").wait_for()
        link.get_by_text("已完成").first.wait_for()

        elsewhere = stranger.new_page()  # the address copied to someone
        elsewhere.goto(shared)
        elsewhere.get_by_role("heading", name="运行").wait_for()
    finally:
        chosen.close()
        stranger.close()


def _wait_address(page: Any, *parts: str) -> None:
    """Wait until the address bar holds each of ``parts`` (Streamlit replaces the history
    entry when it changes the query, which Playwright's ``wait_for_url`` misses)."""
    page.wait_for_function("(parts) => parts.every((part) => location.href.includes(part))",
                           arg=list(parts))
