"""The Plan page's review at 1280x720 in Chromium, where a newcomer met its rough edges.

One PlanBoard is served for the module (offline, its own home); each test opens a tab of
the module's browser context on it and plans the customer-service scenario. The step
panel's Condition shows without a scroll inside the panel, and it is checked as it is
typed: a note beside it changes at a pause in typing, before Enter, and typing that goes on
after such a commit keeps every character.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.browser import (
    GRAPH,
    PLAN_TABLE,
    generate_scenario,
    needs_chromium,
    open_tab,
    serve_app,
)

pytestmark = needs_chromium

# Elements inside ``el`` (and itself) that scroll their content: more content than height,
# and overflow that scrolls (a text field's own scrolling does not count).
_SCROLLERS = """el => [el, ...el.querySelectorAll('*')]
  .filter(e => !['TEXTAREA', 'INPUT'].includes(e.tagName)
    && e.scrollHeight > e.clientHeight + 1
    && /(auto|scroll)/.test(getComputedStyle(e).overflowY))
  .map(e => e.className || e.tagName)"""
# Elements inside ``el`` that scroll sideways: the table's grid when its columns are wider
# than the page gives it.
_SIDEWAYS = """el => [...el.querySelectorAll('*')]
  .filter(e => e.scrollWidth > e.clientWidth + 1
    && /(auto|scroll)/.test(getComputedStyle(e).overflowX))
  .map(e => e.className)"""
# The text of every visible button that shows less than its label (an ellipsis).
_CUT_LABELS = """() => [...document.querySelectorAll('button')].filter(b => b.offsetParent)
  .flatMap(b => [b, ...b.querySelectorAll('*')])
  .filter(e => e.scrollWidth > e.clientWidth + 1 && e.textContent.trim())
  .map(e => e.textContent.trim())"""


@pytest.fixture(scope="module")
def review_app(module_home) -> Iterator[str]:
    """PlanBoard served for the module; its address."""
    with serve_app(module_home, module_home.parent / "streamlit.log") as url:
        yield url


def _pick_in_graph(tab, step_id: str) -> None:
    tab.frame_locator(GRAPH).locator(f"g.node#step-{step_id}").click()
    tab.get_by_role("heading", name=f"Step {step_id}").wait_for()


def _in_viewport(tab, locator) -> bool:
    box = locator.bounding_box()
    size = tab.viewport_size
    return (box is not None and box["y"] >= 0 and box["y"] + box["height"] <= size["height"]
            and box["x"] >= 0 and box["x"] + box["width"] <= size["width"])


def test_the_condition_is_in_view_without_an_inner_scroll_and_checked_as_it_is_typed(
        tabs, review_app, tmp_path):
    from playwright.sync_api import expect

    with open_tab(tabs, review_app) as tab:
        try:
            generate_scenario(tab)
            _pick_in_graph(tab, "s1")  # the knowledge search: two arguments above Condition
            panel = tab.locator(".st-key-step_panel")
            condition = panel.locator(".st-key-step_condition input")
            expect(condition).to_have_value("")
            assert panel.evaluate(_SCROLLERS) == []
            condition.scroll_into_view_if_needed()
            assert _in_viewport(tab, condition)

            _pick_in_graph(tab, "s3")  # the refund: its condition reads s2
            expect(condition).to_have_value("s2.status == 'delivered'")
            assert panel.evaluate(_SCROLLERS) == []
            condition.fill("s9.status == 'x'")
            condition.press("Enter")
            unknown = panel.get_by_text("reads s9, which is not a step of the plan")
            unknown.wait_for()
            condition.press("ControlOrMeta+a")
            condition.press_sequentially("s2.status == ", delay=20)
            unknown.wait_for(state="detached")  # at the pause, no Enter
            unparsable = panel.get_by_text("condition does not parse")
            unparsable.wait_for()
            # each key after a pause longer than the commit's: a commit's redraw lands while
            # the next key is typed, and the space the plan strips stays in the field
            condition.press_sequentially("'delivered'", delay=400)
            unparsable.wait_for(state="detached")
            expect(condition).to_have_value("s2.status == 'delivered'")
            tab.wait_for_timeout(800)  # the last commit drawn
            expect(condition).to_have_value("s2.status == 'delivered'")
            panel.get_by_text("Checked on the results of s2.").wait_for()
        except Exception:
            tab.screenshot(path=str(tmp_path / "failure.png"))  # kept by pytest for a look
            raise


def test_the_table_shows_every_column_and_no_button_label_is_cut(tabs, review_app, tmp_path):
    """Issue 44: the table cut off its Args column and had no Condition column in sight;
    "Start from a blank …" and "Compare var…" were cut."""
    with open_tab(tabs, review_app) as tab:
        try:
            generate_scenario(tab)
            table = tab.locator(PLAN_TABLE).first
            assert table.evaluate(
                "el => [...el.querySelectorAll('th')].map(th => th.textContent)") == [
                "ID", "Description", "Tool", "Depends on", "Args (JSON)", "Condition"]
            assert table.evaluate(_SIDEWAYS) == []
            assert tab.evaluate(_CUT_LABELS) == []
            tab.locator(".st-key-language label").filter(has_text="中文").click()
            tab.get_by_role("button", name="从空白计划开始").wait_for()
            assert tab.locator(PLAN_TABLE).first.evaluate(_SIDEWAYS) == []
            assert tab.evaluate(_CUT_LABELS) == []
        except Exception:
            tab.screenshot(path=str(tmp_path / "failure.png"))  # kept by pytest for a look
            raise
