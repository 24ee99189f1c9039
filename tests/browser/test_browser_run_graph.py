"""The run page's graph in Chromium at 1280x720: a tab of its own, every node readable.

The churn scenario's offline plan (six steps, five side by side) is approved and run by an
app whose analytics tools hold each call until the test opens their gate
(tests/toolsets/held.py): the run stays live, four steps running and two pending, for as
long as the test looks at it, whatever the machine's load. The step cards are the first
tab; the graph's tab gives the graph the page's width (820 px beside the sidebar), where
every text renders at 11 px or more (font size times the SVG's scale, as
tests/browser/test_browser_graph.py measures) and lies inside its node with room to spare, and,
without scrolling inside the graph, all six nodes lie wholly in sight (the five side by
side wrap narrower and need about 800 px at 11 px; the old column beside the cards showed
two). The chosen tab survives the live fragment's polling and the rerun when the run ends,
and the graph in it follows the run to its end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import SCRIPT_IDLE_JS, WAIT_MS, button, needs_chromium
from tests.toolsets import held
from ui.i18n import TEXT

pytestmark = needs_chromium

FRAME = ".st-key-run_tabs iframe[title='ui.graph_view.plan_graph']"
MIN_PX = 11
MIN_GAP_PX = 4  # between a text and its node's border, left and right (as test_browser_graph)
SLACK_PX = 0.5  # sub-pixel rounding of the boxes
NODES = 6
LIVE_MARKS = "[○▶]"  # core.plan.model.STATUS_ICONS of pending and running

# Every node of the graph: whether its box lies wholly inside the graph's visible area (the
# scrolling view less its scrollbars), the smallest rendered font size of its texts, and the
# least room between a text and the node's shape, left or right.
_MEASURE = """slack => {
  const view = document.getElementById('view');
  const svg = view.querySelector('svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const area = view.getBoundingClientRect();
  const right = area.left + view.clientLeft + view.clientWidth;
  const bottom = area.top + view.clientTop + view.clientHeight;
  return [...svg.querySelectorAll('g.node')].map(node => {
    const box = node.getBoundingClientRect();
    const texts = [...node.querySelectorAll('text')];
    const sizes = texts.map(text => parseFloat(getComputedStyle(text).fontSize) * scale);
    const shape = node.querySelector('path, polygon').getBoundingClientRect();
    const room = Math.min(...texts.map(text => {
      const line = text.getBoundingClientRect();
      return Math.min(line.left - shape.left, shape.right - line.right);
    }));
    return {id: node.id, px: Math.min(...sizes), room,
            whole: box.left >= area.left - slack && box.right <= right + slack
              && box.top >= area.top - slack && box.bottom <= bottom + slack};
  });
}"""


def served_environment(module_home: Path) -> dict[str, str]:
    """The served app's (tests/browser/conftest.py): the demo's analytics tools held at the
    gate."""
    return {"PLANBOARD_TOOLSETS": "builtin,tests.toolsets.held",
            held.GATE_ENV: str(_gate_path(module_home))}


def _gate_path(module_home: Path) -> Path:
    """The file whose existence lets the served app's analytics tools go on."""
    return module_home.parent / "gate"


@pytest.fixture
def gate(module_home: Path) -> Iterator[Path]:
    """The gate, shut for the test's run; creating the file opens it (and the test's end,
    so that no call stays held)."""
    gate_path = _gate_path(module_home)
    gate_path.unlink(missing_ok=True)
    try:
        yield gate_path
    finally:
        gate_path.touch()


def _words(lang: str, key: str) -> str:
    return TEXT[key][lang]


def _start_churn_run(page, lang: str) -> None:
    """In ``lang``, plan the churn scenario and run it."""
    if lang == "zh":
        page.locator(".st-key-language label").filter(has_text="中文").click()
        page.locator("[data-testid='stSidebar'] summary").filter(
            has_text=_words(lang, "settings_run")).wait_for()
    # a click that lands while a script run redraws the page may be lost
    page.wait_for_function(SCRIPT_IDLE_JS, timeout=WAIT_MS)
    button(page, "scenario_churn-analysis").click()
    request = page.locator(".st-key-request textarea")
    page.wait_for_function("el => el.value.trim().length > 0", arg=request.element_handle(),
                           timeout=WAIT_MS)
    button(page, "generate_plan").click()
    page.get_by_text(_words(lang, "plan_valid")).wait_for()
    approve = button(page, "approve_run")
    approve.scroll_into_view_if_needed()
    approve.click()
    page.wait_for_url(re.compile(r"/run\?run=\w+"))


def _tab(page, name: str):
    return page.locator(".st-key-run_tabs [role='tab']").filter(has_text=name)


def _measure(page) -> list[dict]:
    frame = page.frame_locator(FRAME)
    frame.locator("#canvas svg g.node").first.wait_for()
    page.wait_for_timeout(300)  # the component fits the drawing after its frame resized
    return frame.locator("#view").evaluate(f"(_, slack) => ({_MEASURE})(slack)", SLACK_PX)


def _problems(nodes: list[dict], when: str) -> list[str]:
    found = [] if len(nodes) == NODES else [f"{when}: {len(nodes)} nodes, not {NODES}"]
    found += [f"{when}: {n['id']} is not wholly in the graph's visible area"
              for n in nodes if not n["whole"]]
    found += [f"{when}: {n['id']} text has {n['room']:.1f} px to its node's border"
              for n in nodes if n["room"] < MIN_GAP_PX]
    return found + [f"{when}: {n['id']} text at {n['px']:.2f} px"
                    for n in nodes if n["px"] < MIN_PX - 0.01]


def _graph_marks(page) -> str:
    """The first character of every text in the graph: the nodes' status marks among them."""
    return page.frame_locator(FRAME).locator("#canvas svg").first.evaluate(
        "s => [...s.querySelectorAll('g.node text')].map(t => t.textContent.trim()[0]).join('')")


def _wait_graph_finished(page) -> None:
    """Wait until every node of the graph in the tab shows a finished mark (no ○ or ▶)."""
    for _tick in range(60):
        marks = _graph_marks(page)
        if marks and not re.search(LIVE_MARKS, marks):
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"the graph never showed the run finished: {marks!r}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_churn_runs_graph_shows_every_node_readable_in_its_own_tab(page, gate, tmp_path,
                                                                      lang):
    steps, graph = _words(lang, "steps"), _words(lang, "plan_graph")
    try:
        _start_churn_run(page, lang)
        page.locator("[class*='st-key-step_card_']").first.wait_for()
        assert _tab(page, steps).get_attribute("aria-selected") == "true"  # cards first
        _tab(page, graph).click()
        problems = _problems(_measure(page), "live")
        assert re.search(LIVE_MARKS, _graph_marks(page))  # measured while the run is live
        assert page.locator("[class*='st-key-step_card_']:visible").count() == 0
        page.wait_for_timeout(2_500)  # a few polls of the live fragment
        assert _tab(page, graph).get_attribute("aria-selected") == "true"
        gate.touch()  # the held steps go on: the run ends
        page.get_by_text(_words(lang, "run_status_completed")).first.wait_for(timeout=60_000)
        _wait_graph_finished(page)
        assert _tab(page, graph).get_attribute("aria-selected") == "true"
        problems += _problems(_measure(page), "finished")
        _tab(page, graph).evaluate("tab => tab.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(tmp_path / f"run-graph-{lang}.png"))  # for a look
    except Exception:
        page.screenshot(path=str(tmp_path / "failure.png"))  # kept by pytest for a look
        raise
    assert not problems, "\n".join(problems)
