"""The whole journey in a real browser: scenario -> offline plan -> edit -> approve -> confirm.

Starts ``streamlit run app.py`` on a free port with a fresh PLANBOARD_HOME and no API key,
drives Debian's chromium (/usr/bin/chromium, never a downloaded browser) with Playwright,
and saves the screenshots the README shows: to the test's temporary folder, or to
``$PLANBOARD_SCREENSHOTS_DIR`` when set (``scripts/refresh-screenshots.sh`` points it at
docs/screenshots/), so that running the tests leaves the checkout untouched.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.browser import WAIT_MS, needs_chromium, open_browser, serve_app
from tests.browser import button as _button

# Read at import: the autouse isolated_environment fixture clears PLANBOARD_* before a test.
SCREENSHOTS_DIR = os.environ.get("PLANBOARD_SCREENSHOTS_DIR", "")
SCREENSHOTS = Path(SCREENSHOTS_DIR).resolve() if SCREENSHOTS_DIR else None
EDITED = "Find an easy robot vacuum under 2000"

pytestmark = needs_chromium


@pytest.fixture
def page(isolated_environment, tmp_path):
    """A chromium page on a running PlanBoard (offline: no key)."""
    with (serve_app(isolated_environment, tmp_path / "streamlit.log") as url,
          open_browser(url) as tab):
        yield tab


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
    grid = page.locator("[class*='st-key-plan_editor_'] [data-testid='data-grid-canvas']").first
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
            page.wait_for_function(
                "text => [...document.querySelectorAll('[data-testid=stGraphVizChart] svg')]"
                ".some(svg => svg.textContent.includes(text))",
                arg="Find an easy robot vacuum", timeout=10_000)
            return
        except Exception:  # playwright's TimeoutError / a lost keystroke: try again
            page.keyboard.press("Escape")
    raise AssertionError("could not edit the description cell of the plan table")


def test_robot_vacuum_journey_offline(page, tmp_path):
    shots = SCREENSHOTS or tmp_path / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    try:
        _journey(page, shots)
    except Exception:
        page.screenshot(path=str(tmp_path / "failure.png"))  # kept by pytest for a look
        raise


def _journey(page, shots: Path) -> None:
    _button(page, "scenario_shop-refund").click()
    request = page.locator(".st-key-request textarea")
    page.wait_for_function(
        "el => el.value.includes('88231')", arg=request.element_handle(), timeout=WAIT_MS)
    _button(page, "generate_plan").click()
    page.locator("[class*='st-key-plan_editor_']").first.wait_for()
    page.get_by_text("The plan is valid.").wait_for()

    _edit_first_description(page)
    graph = page.locator("[data-testid='stGraphVizChart'] svg").first
    page.locator(".st-key-language label").filter(has_text="中文").click()  # relabels the table
    page.get_by_role("button", name="批准并运行").wait_for()
    assert "Find an easy robot vacuum" in graph.text_content()
    # relabelled choices keep their value (Streamlit restarts a widget whose label changes)
    assert page.locator(".st-key-plan_mode input:checked").count() == 1
    page.locator(".st-key-language label").filter(has_text="English").click()
    page.get_by_role("button", name="Approve & run").wait_for()
    _scroll_to_top(page, "[class*='st-key-plan_editor_']", offset=-120)
    page.screenshot(path=str(shots / "plan-review.png"))

    approve = _button(page, "approve_run")
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
    assert page.locator("[class*='st-key-confirm_step_']").count() == 0
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
    page.locator(".st-key-present_graph svg").first.wait_for()
    assert not page.locator("[data-testid='stSidebar']").is_visible()
    assert page.locator(".st-key-run_pause, .st-key-followup_text").count() == 0
    size = page.locator(".st-key-run_answer p").first.evaluate(
        "el => parseFloat(getComputedStyle(el).fontSize)")
    assert size >= 22, size
    page.screenshot(path=str(shots / "presentation.png"))
