"""The whole journey in a real browser: scenario -> offline plan -> edit -> approve -> confirm.

Starts ``streamlit run app.py`` on a free port with a fresh PLANBOARD_HOME and no API key,
drives Debian's chromium (/usr/bin/chromium, never a downloaded browser) with Playwright
in a 1280x720 window, and saves the screenshots the README shows: to the test's temporary
folder, or to ``$PLANBOARD_SCREENSHOTS_DIR`` when set (``scripts/refresh-screenshots.sh``
points it at docs/screenshots/), so that running the tests leaves the checkout untouched.
A second flow picks a step by clicking its node in the graph and edits an argument through
its form field in the step panel: the table and that step's node in the graph (in the
component's frame) show the new value, and Undo brings the old one back in both; it also
checks that the table's first four columns need no sideways scrolling.

Demo pace: with 3 s per step (Run options), the operations scenario's offline plan (five
steps: s1, s2, s3 and s4 side by side, s5) is approved and the step cards' status marks are
read every 200 ms while the run goes on: a demo audience must see the cards change at every
step that ends, not jump from "pending" to "done". How far the run is when the run page
first shows its cards depends on the machine's load; every later wave of steps must show.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import (
    GRAPH,
    WAIT_MS,
    button,
    generate_scenario,
    needs_chromium,
    open_tab,
    set_demo_pace,
)
from tests.support.browser import PLAN_TABLE as TABLE

# Read at import: the autouse isolated_environment fixture clears PLANBOARD_* before a test.
SCREENSHOTS_DIR = os.environ.get("PLANBOARD_SCREENSHOTS_DIR", "")
SCREENSHOTS = Path(SCREENSHOTS_DIR).resolve() if SCREENSHOTS_DIR else None
EDITED = "Find an easy robot vacuum under 2000"
# The graph's words, line by line (a label wraps at spaces): what a reader sees in it.
_GRAPH_TEXT = "svg => [...svg.querySelectorAll('text')].map(t => t.textContent).join(' ')"

pytestmark = needs_chromium


@pytest.fixture
def shots(tmp_path) -> Path:
    """Where the screenshots go (see the module docstring)."""
    folder = SCREENSHOTS or tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def tab(tabs, served_app) -> Iterator[Any]:
    """A page of its own on the module's served app, a tab of the module's browser context:
    a load there reuses the context's cache of the app's scripts (in a fresh context, each
    test's first load cost Chromium about a second of CPU more). The journey puts the
    language it changes back to English, which the context remembers."""
    with open_tab(tabs, served_app) as page:
        yield page


def _graph_text(page, node: str = "") -> str:
    """The words of the graph, or of the node ``node`` (``g#step-s2``) alone."""
    drawing = page.frame_locator(GRAPH).locator(f"#canvas svg {node}".strip()).first
    return drawing.evaluate(_GRAPH_TEXT)


def _wait_graph_text(page, text: str, timeout_ms: int = 10_000, node: str = "") -> None:
    """Wait until the graph (redrawn in its frame after a rerun), or its node ``node``, shows
    ``text``."""
    for _tick in range(timeout_ms // 250):
        if text in _graph_text(page, node):
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"the graph never showed {text!r}: {_graph_text(page, node)!r}")


def _scroll_to_top(page, selector: str, offset: int) -> None:
    """Scroll the app's inner scrolling container so ``selector`` sits near the top."""
    page.locator(selector).first.evaluate(
        "(el, offset) => { el.scrollIntoView({block: 'start'});"
        " let box = el.parentElement;"
        " while (box && box.scrollHeight <= box.clientHeight) box = box.parentElement;"
        " if (box) box.scrollBy(0, offset); }", offset)
    page.wait_for_timeout(300)


def _edit_first_description(page) -> None:
    """Double-click the description cell of row 1, replace its text, press Enter.

    The grid is a canvas that may still be settling right after a rerun, so the edit is
    retried until the diagram (redrawn from the edited plan) shows the new text.
    """
    grid = page.locator(f"{TABLE} [data-testid='data-grid-canvas']").first
    editor = page.locator("textarea.gdg-input").first
    for _attempt in range(3):
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        assert box is not None
        # columns: row marker (~30 px), id (~70 px), description; the header row is ~36 px
        page.mouse.dblclick(box["x"] + 150, box["y"] + 36 + 17)
        try:
            editor.wait_for(timeout=5_000)
            editor.press("ControlOrMeta+a")
            editor.type(EDITED)
            assert editor.input_value() == EDITED
            editor.press("Enter")
            _wait_graph_text(page, EDITED)
            return
        except Exception:  # playwright's TimeoutError / a lost keystroke: try again
            page.keyboard.press("Escape")
    raise AssertionError("could not edit the description cell of the plan table")


def test_robot_vacuum_journey_offline(tab, shots, tmp_path):
    try:
        _journey(tab, shots)
    except Exception:
        tab.screenshot(path=str(tmp_path / "failure.png"))  # kept by pytest for a look
        raise


def _journey(page, shots: Path) -> None:
    generate_scenario(page)
    _edit_first_description(page)
    page.locator(".st-key-language label").filter(has_text="中文").click()  # relabels the table
    page.get_by_role("button", name="批准并运行").wait_for()
    _wait_graph_text(page, EDITED)
    # relabelled choices keep their value (Streamlit restarts a widget whose label changes)
    assert page.locator(".st-key-plan_mode input:checked").count() == 1
    page.locator(".st-key-language label").filter(has_text="English").click()
    page.get_by_role("button", name="Approve & run").wait_for()

    approve = button(page, "approve_run")
    approve.scroll_into_view_if_needed()
    approve.click()
    page.wait_for_url(re.compile(r"/run\?run=\w+"))
    confirm = page.locator("[class*='st-key-confirm_step_'] button").first
    confirm.wait_for()
    run_url = page.url

    page.reload()  # mid-run, while the refund waits for confirmation
    confirm = page.locator("[class*='st-key-confirm_step_'] button").first
    confirm.wait_for()
    assert page.url == run_url
    page.get_by_text("Waiting for confirmation").first.wait_for()

    confirm.scroll_into_view_if_needed()
    confirm.click()
    answer = page.locator(".st-key-run_answer")
    page.wait_for_function(
        "() => (document.querySelector('.st-key-run_answer') || {}).innerText"
        "?.includes('S10 Lite')")
    text = answer.inner_text()
    assert "Bit S10 Lite robot vacuum" in text  # an English answer names the English product
    assert re.search(r"RF\d{6,}", text), text
    # the card's own fragment drops the decision at its next drawing, which may follow the
    # answer's by a moment
    page.locator("[class*='st-key-confirm_step_']").first.wait_for(state="detached")
    assert page.url == run_url
    _scroll_to_top(page, ".st-key-run_answer", offset=-170)
    page.screenshot(path=str(shots / "run-page.png"))

    # the sidebar's Run link returns to this run after another page (the address loses ?run=)
    page.locator("[data-testid='stSidebarNav'] a[href$='/history']").click()
    page.wait_for_url(re.compile(r"/history"))
    page.locator("[data-testid='stSidebarNav'] a[href$='/run']").click()
    page.wait_for_url(run_url)
    page.locator(".st-key-run_answer").get_by_text("S10 Lite").first.wait_for()

    # the presentation view: no sidebar, no editors, the answer in large type
    page.goto(f"{run_url}&present=1")
    page.locator(".st-key-present_view .st-key-run_answer").get_by_text("S10 Lite").first.wait_for()
    page.frame_locator(f".st-key-present_graph {GRAPH}").locator("#canvas svg").first.wait_for()
    assert not page.locator("[data-testid='stSidebar']").is_visible()
    assert page.locator(".st-key-run_pause, .st-key-followup_text").count() == 0
    size = page.locator(".st-key-run_answer p").first.evaluate(
        "el => parseFloat(getComputedStyle(el).fontSize)")
    assert size >= 22, size
    page.screenshot(path=str(shots / "presentation.png"))


def test_a_step_clicked_in_the_graph_is_edited_in_the_step_panel(tab, shots, tmp_path):
    try:
        _step_panel_flow(tab, shots)
    except Exception:
        tab.screenshot(path=str(tmp_path / "failure.png"))  # kept by pytest for a look
        raise


def _assert_table_headers_fit(page) -> None:
    """ID, description, tool and dependencies lie wholly inside the grid's visible area.

    The grid's accessibility table lists only the columns that show (even in part) in its
    visible area: a fifth column listed means the fourth ends inside it; and the grid has
    not been scrolled sideways.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    selector = f"{TABLE} [role='columnheader']"
    # the grid draws its columns after the page settles: wait for them (on a timeout the
    # assertions below say what was there instead)
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function("sel => document.querySelectorAll(sel).length > 4",
                               arg=selector, timeout=15_000)
    headers = page.locator(selector).all_text_contents()
    assert headers[:4] == ["ID", "Description", "Tool", "Depends on"], headers
    assert len(headers) > 4, headers
    assert page.locator(f"{TABLE} .dvn-scroller").first.evaluate("el => el.scrollLeft") == 0


def _step_panel_flow(page, shots: Path) -> None:
    from playwright.sync_api import expect

    generate_scenario(page)
    _assert_table_headers_fit(page)
    graph = page.frame_locator(GRAPH)
    panel = page.locator(".st-key-step_panel")

    graph.locator("g.node#step-s2").click()
    page.get_by_role("heading", name="Step s2").wait_for()
    # the panel's fields take the new step's values just after its heading: wait for them
    description = panel.locator(".st-key-step_description textarea")
    expect(description).to_have_value("Look up order 88231 and its status", timeout=WAIT_MS)
    expect(graph.locator("g.node#step-s2")).to_have_class(re.compile(r"\bselected\b"))
    expect(page.locator(".st-key-step_pick input")).to_have_value("s2")  # the table's picker

    order = panel.locator(".st-key-step_arg_order_id input")  # the form field of order_id
    expect(order).to_have_value("88231", timeout=WAIT_MS)
    assert "order_id=88231" in _graph_text(page, "g#step-s2")  # the node shows its arguments
    order.fill("70412")
    order.press("Enter")
    page.wait_for_function(
        "cells => [...document.querySelectorAll(cells)]"
        ".some(cell => cell.textContent === '{\"order_id\": \"70412\"}')",
        arg=f"{TABLE} [role='gridcell']")
    _wait_graph_text(page, "order_id=70412", node="g#step-s2")  # the edited node, redrawn
    assert "order_id=88231" not in _graph_text(page, "g#step-s2")
    assert "order_id=88231" in _graph_text(page, "g#step-s3")  # the refund keeps its own
    description.fill("Look up order 70412 and its status")
    description.press("ControlOrMeta+Enter")  # a text area sends its text on Ctrl+Enter
    _wait_graph_text(page, "Look up order 70412 and its status")
    assert order.input_value() == "70412"

    button(page, "undo_edit").click()  # one edit at a time: the description goes first
    _wait_graph_text(page, "Look up order 88231 and its status")
    button(page, "undo_edit").click()
    page.wait_for_function("el => el.value === '88231'", arg=order.element_handle())
    _wait_graph_text(page, "order_id=88231", node="g#step-s2")

    graph.locator("g.node#step-s3").click()  # the refund: a condition and references
    page.get_by_role("heading", name="Step s3").wait_for()
    page.wait_for_function("el => el.value === 'item is broken'",
                           arg=panel.locator(".st-key-step_arg_reason input").element_handle())
    _scroll_to_top(page, ".st-key-step_panel", offset=-80)
    page.screenshot(path=str(shots / "plan-review.png"))


DEMO_STEPS = 5
DEMO_PACE = "3"  # seconds before each step
# the number of cards done once each wave of the operations plan ended: s1, s2, s3+s4, s5
DEMO_WAVES_DONE = (1, 2, 4, 5)
# Every card's head line: its status mark and id, e.g. "✓ s1|▶ s2|○ s3|○ s4|○ s5".
_CARD_MARKS = """() => [...document.querySelectorAll("[class*='st-key-step_card_'] strong")]
    .map(mark => mark.innerText.trim()).join("|")"""


def _start_ops_run(page) -> None:
    button(page, "scenario_ops-health").click()
    request = page.locator(".st-key-request textarea")
    page.wait_for_function(
        "el => el.value.includes('micro-services')", arg=request.element_handle(),
        timeout=WAIT_MS)
    button(page, "generate_plan").click()
    page.get_by_text("The plan is valid.").wait_for()
    approve = button(page, "approve_run")
    approve.scroll_into_view_if_needed()
    approve.click()
    page.wait_for_url(re.compile(r"/run\?run=\w+"))


def _watch_cards(page, timeout_s: float = 90.0) -> list[str]:
    """The distinct card snapshots seen, in order, until every card is finished."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        marks = page.evaluate(_CARD_MARKS)
        if marks.count("|") == DEMO_STEPS - 1 and (not seen or seen[-1] != marks):
            seen.append(marks)
        if seen and not re.search(r"[○▶]", seen[-1]):
            return seen
        page.wait_for_timeout(200)
    raise AssertionError(f"the run did not finish in {timeout_s:.0f} s; seen: {seen}")


def test_a_paced_five_step_run_shows_every_wave_of_steps_end(tab, tmp_path):
    try:
        set_demo_pace(tab, DEMO_PACE)
        _start_ops_run(tab)
        seen = _watch_cards(tab)
        tab.get_by_text("Completed").first.wait_for()
    except Exception:
        tab.screenshot(path=str(tmp_path / "failure.png"))  # kept by pytest for a look
        raise
    done = [snapshot.count("✓") for snapshot in seen]
    assert done[0] < DEMO_STEPS, seen  # the cards were seen while the run went on
    assert done == sorted(done), seen  # cards only move forward
    # each wave that ended after the first snapshot was a state of its own
    assert {n for n in DEMO_WAVES_DONE if n > done[0]} <= set(done), seen

