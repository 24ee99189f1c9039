"""The plan graph component in Chromium: readable text, labels inside nodes, click, pan, zoom.

tests/apps/graph_page.py shows a scenario's offline plan with ui.graph_view.plan_graph, full
width or in a narrow column, in English or Chinese: the churn plan (six steps, five side by
side, SQL arguments) at 1280x720 and 1440x900, and the customer-service plan (arguments in
Chinese, a condition, a side effect's ⚠) at 1280x720. Every text of the graph renders at
11 px or more (its font size times the SVG's scale), and every text box lies inside its
node's shape with room to spare on either side (MIN_GAP_PX): a box that merely touches the
border reads as clipped. A line of Chinese text, whose characters fill their boxes edge to
edge, keeps a wider room (MIN_GAP_EM_WIDE) within the node's drawn border, its rounded
corners included. A click on a node reaches the page's on_select, also a second click on the
same node, and outlines that node; a drag pans without selecting. At the default zoom,
every phase's cluster lies wholly inside the view, its title inside its border (issue 44:
beside the step panel, the p1 cluster was cut off at the right edge).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import pytest

from core.plan.label_text import display_width
from tests.support.browser import (
    GRAPH,
    MIN_GAP_PX,
    SLACK_PX,
    cut_phases,
    needs_chromium,
    open_tab,
    serve_app,
)

pytestmark = needs_chromium

APP = "tests/apps/graph_page.py"
MIN_PX = 11
MIN_GAP_EM_WIDE = 1.0  # beside a line of CJK text, within the border's curve (Latin: ~0.7)
PAGES = [  # scenario, viewports
    ("churn-analysis", [(1280, 720), (1440, 900)]),
    ("shop-refund", [(1280, 720)]),
]
SELECTED_STROKE = "rgb(25, 113, 194)"  # ui/graph_view/frontend/index.html: g.node.selected

# For each text of the graph: its rendered font size in px, the room between its box and its
# node's shape (the first path/polygon of the node's group) on each side, in px, and the room
# left and right, in em, within which the box's corners stay inside the shape as drawn (a
# rounded border curves in beside the first and last lines).
_MEASURE = """() => {
  const svg = document.querySelector('#canvas svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const sideEm = (text, shape) => {
    const box = text.getBBox();
    const em = parseFloat(getComputedStyle(text).fontSize);
    const inside = (x, y) => shape.isPointInFill(new DOMPoint(x, y));
    let room = 0;
    for (let gap = 0.05; gap <= 2; gap += 0.05) {
      const [left, right] = [box.x - gap * em, box.x + box.width + gap * em];
      const [top, bottom] = [box.y, box.y + box.height];
      if (![[left, top], [left, bottom], [right, top], [right, bottom]].every(
          ([x, y]) => inside(x, y))) break;
      room = gap;
    }
    return room;
  };
  return [...svg.querySelectorAll('text')].map(text => {
    const node = text.closest('g.node');
    const box = text.getBoundingClientRect();
    const path = node && node.querySelector('path, polygon');
    const shape = path && path.getBoundingClientRect();
    return {text: text.textContent, node: node && node.id,
            px: parseFloat(getComputedStyle(text).fontSize) * scale,
            room: shape && [box.left - shape.left, shape.right - box.right,
                            box.top - shape.top, shape.bottom - box.bottom],
            side_em: path && sideEm(text, path)};
  });
}"""


@pytest.fixture(scope="module")
def graph_page(module_home):
    """The graph test page served for the module (it keeps no state beyond each browser
    session: the address picks the plan); yields its address."""
    with serve_app(module_home, module_home.parent / "streamlit.log", script=APP) as url:
        yield url


def _open(tab, url: str):
    """Load ``url`` and wait for the graph's SVG; the component's frame."""
    tab.goto(url)
    return _drawn(tab)


def _drawn(tab):
    """The (first) graph's frame, once it drew its SVG."""
    frame = tab.frame_locator(GRAPH).first
    frame.locator("#canvas svg g.node").first.wait_for()
    return frame


def _width(tab, narrow: str):
    """The frame of the graph drawn at the page's width (``narrow="0"``) or in the run
    page's narrow column (``"1"``), of a page opened with ``narrow=both``."""
    return tab.frame_locator(f".st-key-width_{narrow} {GRAPH}")


def _type_query(tab, query: str) -> None:
    """Type ``query`` (an address's query) into the test page's field: a rerun of the page
    draws it, in the frames already there (a new load would cost Chromium seconds)."""
    field = tab.locator(".st-key-query input")
    field.fill(query)
    field.press("Enter")


def _redraw(tab, query: str, *frames) -> None:
    """Show ``query`` in a rerun and wait until each of ``frames`` drew its new graph (a
    drawing replaces the SVG, so the one marked before it is gone)."""
    for frame in frames:
        frame.locator("#canvas svg").evaluate("svg => { svg.dataset.before = 'yes'; }")
    _type_query(tab, query)
    for frame in frames:
        frame.locator("#canvas svg:not([data-before]) g.node").first.wait_for()


def _misfits(texts: list[dict], where: str) -> list[str]:
    """The texts drawn under MIN_PX, or not inside their node with MIN_GAP_PX to spare."""
    found = [f"{where}: {t['text']!r} at {t['px']:.2f} px"
             for t in texts if t["px"] < MIN_PX - 0.01]
    for t in texts:
        if t["room"] is None:
            continue
        left, right, top, bottom = t["room"]
        if min(left, right) < MIN_GAP_PX or min(top, bottom) < -SLACK_PX:
            found.append(f"{where}: {t['text']!r} in {t['node']} with "
                         f"{left:.1f} px left, {right:.1f} px right, {top:.1f}/{bottom:.1f} px")
        wide = display_width(t["text"]) > len(t["text"])
        if wide and t["side_em"] < MIN_GAP_EM_WIDE - 0.01:
            found.append(f"{where}: {t['text']!r} in {t['node']} with {t['side_em']:.2f} em "
                         "beside it")
    return found


def test_graph_text_is_readable_and_inside_its_nodes(tabs, graph_page):
    problems: list[str] = []
    smallest = 99.0
    shown = [(scenario, viewport, lang) for scenario, viewports in PAGES
             for viewport in viewports for lang in ("en", "zh")]
    # one load: each next scenario, viewport or language is a rerun whose graph is drawn
    # anew at the viewport's width; each shows it at the page's width and in the narrow
    # column
    with open_tab(tabs, f"{graph_page}/?scenario={shown[0][0]}&lang=en&narrow=both") as tab:
        frames = {narrow: _width(tab, narrow) for narrow in ("0", "1")}
        for index, (scenario, (width, height), lang) in enumerate(shown):
            tab.set_viewport_size({"width": width, "height": height})
            if index:
                _redraw(tab, f"scenario={scenario}&lang={lang}&narrow=both", *frames.values())
            for narrow, frame in frames.items():
                where = f"{scenario} {width}x{height} {lang} narrow={narrow}"
                frame.locator("#canvas svg g.node").first.wait_for()
                texts = frame.locator("#canvas svg").evaluate(_MEASURE)
                # every node: a header and a description at least
                assert len(texts) >= 8, where
                assert any("=" in t["text"] for t in texts), where  # arguments
                smallest = min(smallest, *(t["px"] for t in texts))
                problems += _misfits(texts, where)
    assert not problems, "\n".join(problems)
    assert smallest >= MIN_PX - 0.01


def test_two_phases_side_by_side_fit_beside_the_step_panel_at_the_default_zoom(tabs, graph_page):
    with open_tab(tabs, f"{graph_page}/?phased=twins&narrow=plan") as tab:
        frame = _drawn(tab)
        assert frame.locator("g.cluster").count() == 4
        assert cut_phases(frame) == []
        texts = frame.locator("#canvas svg").evaluate(_MEASURE)
        assert min(t["px"] for t in texts) >= MIN_PX - 0.01  # readable, not shrunk to fit


def _selected(tab) -> str:
    return tab.get_by_text(re.compile(r"^selected: ")).inner_text()


def test_click_selects_every_time_and_drag_pans(tabs, graph_page):
    with open_tab(tabs, f"{graph_page}/?lang=zh&narrow=1") as tab:
        frame = _drawn(tab)
        for step, clicks in (("s3", 1), ("s3", 2), ("s1", 3)):
            frame.locator(f"g#step-{step}").click()
            tab.get_by_text(f"selected: {step} ({clicks} clicks)").wait_for()
        assert frame.locator("g.node.selected").get_attribute("id") == "step-s1"
        outline = frame.locator("g.node.selected > path").evaluate(
            "shape => [getComputedStyle(shape).stroke, getComputedStyle(shape).strokeWidth]")
        assert outline == [SELECTED_STROKE, "3px"], outline

        view = frame.locator("#view")
        assert view.evaluate("v => v.scrollWidth > v.clientWidth")  # 11 px: wider than the column
        box = view.bounding_box()
        y = box["y"] + box["height"] / 2  # on a node or between: a drag pans either way
        tab.mouse.move(box["x"] + box["width"] - 20, y)
        tab.mouse.down()
        tab.mouse.move(box["x"] + 40, y, steps=8)
        tab.mouse.up()
        assert view.evaluate("v => v.scrollLeft") > 100
        tab.wait_for_timeout(500)
        assert _selected(tab) == "selected: s1 (3 clicks)"  # a drag is not a click

        zoom = frame.locator("#zoom")
        before = int(zoom.inner_text().rstrip("%"))
        frame.locator("#zoom-in").click()
        assert int(zoom.inner_text().rstrip("%")) > before


def test_a_failed_stream_of_marks_is_asked_again_after_a_while_not_at_every_drawing(
        tabs, graph_page):
    """A followed run's graph whose stream fails (served without app.py, a server
    restarting) draws with the tick alone, and asks for the stream again 10 s later, at
    its next drawing (as the step cards do), not at every drawing."""
    feed = "/api/runs/gone/steps"
    asked: list[str] = []
    now = datetime(2026, 6, 24, 9, 0)
    with open_tab(tabs, "about:blank") as tab:
        # the page's Date.now stands still (its timers run) until the test moves it on: on a
        # loaded machine, 10 s may pass between the refusal and the second click's drawing
        tab.clock.set_fixed_time(now)
        tab.on("request", lambda request: asked.append(request.url)
               if urlsplit(request.url).path == feed else None)
        frame = _open(tab, f"{graph_page}/?feed={feed}")
        tab.wait_for_timeout(500)  # the stream asked for, refused
        for step, clicks in (("s3", 1), ("s1", 2)):  # a click draws the graph again
            frame.locator(f"g#step-{step}").click()
            tab.get_by_text(f"selected: {step} ({clicks} clicks)").wait_for()
        tab.wait_for_timeout(500)
        assert len(asked) == 1, asked
        tab.clock.set_fixed_time(now + timedelta(seconds=11))
        frame.locator("g#step-s3").click()
        tab.get_by_text("selected: s3 (3 clicks)").wait_for()
        tab.wait_for_timeout(500)
        assert len(asked) == 2, asked


# Every node of the graph: whether its box lies wholly inside the view's visible area.
_WHOLE = """slack => {
  const view = document.getElementById('view');
  const area = view.getBoundingClientRect();
  const right = area.left + view.clientLeft + view.clientWidth;
  const bottom = area.top + view.clientTop + view.clientHeight;
  return [...view.querySelectorAll('g.node')].map(node => {
    const box = node.getBoundingClientRect();
    return {id: node.id, whole: box.left >= area.left - slack && box.right <= right + slack
      && box.top >= area.top - slack && box.bottom <= bottom + slack};
  });
}"""


def _outside(frame) -> list[str]:
    nodes = frame.locator("#view").evaluate(f"(_, slack) => ({_WHOLE})(slack)", SLACK_PX)
    assert len(nodes) >= 6, nodes
    return [n["id"] for n in nodes if not n["whole"]]


def test_fit_shows_every_node_of_the_churn_graph_and_stays_fitted(tabs, graph_page):
    with open_tab(tabs, f"{graph_page}/?scenario=churn-analysis&narrow=both") as tab:
        for narrow in ("0", "1"):
            frame = _width(tab, narrow)
            frame.locator("#canvas svg g.node").first.wait_for()
            frame.locator("#zoom-in").click()  # zoomed in: nodes out of sight
            frame.locator("#zoom-in").click()
            assert _outside(frame), f"narrow={narrow}: zoomed in, every node still in sight"
            frame.locator("#fit").click()
            tab.wait_for_timeout(500)  # the frame resizes to the fitted drawing
            assert _outside(frame) == [], f"narrow={narrow}"
            tab.set_viewport_size({"width": 1180, "height": 720})  # a resize keeps the fit
            tab.wait_for_timeout(800)
            assert _outside(frame) == [], f"narrow={narrow}, after a resize"
            tab.set_viewport_size({"width": 1280, "height": 720})


def test_a_step_selected_outside_the_graph_is_scrolled_into_sight(tabs, graph_page):
    with open_tab(tabs, f"{graph_page}/?scenario=churn-analysis&narrow=1") as tab:
        frame = _drawn(tab)
        hidden = _outside(frame)
        assert hidden, "the narrow column shows the whole churn graph: nothing to scroll to"
        # picked as the plan table picks a step: the page runs again with it selected
        _type_query(tab, f"scenario=churn-analysis&narrow=1&pick={hidden[-1][5:]}")
        frame.locator(f"g.node#{hidden[-1]}.selected").wait_for()  # and scrolled to, at once
        assert hidden[-1] not in _outside(frame)
        assert "selected" in frame.locator(f"g.node#{hidden[-1]}").get_attribute("class")


def _folded(tab) -> str:
    return tab.get_by_text(re.compile(r"^folded: ")).inner_text()


def test_phases_are_clusters_that_fold_and_unfold_on_a_click(tabs, graph_page):
    with open_tab(tabs, f"{graph_page}/?phased=review", {"width": 1280, "height": 720}) as tab:
        frame = _drawn(tab)
        assert _folded(tab) == "folded: none"  # ten steps: every phase open
        assert frame.locator("g.cluster#phase-p2").count() == 1
        frame.locator("g.cluster#phase-p2 > text").first.click()  # its title folds it
        tab.get_by_text("folded: p2").wait_for()
        frame.locator("g.node#phase-p2").wait_for()
        assert frame.locator("g.cluster#phase-p2").count() == 0
        assert frame.locator("g.node#step-s3").count() == 0  # its step is inside the node
        frame.locator("g.node#phase-p2").click()  # the node unfolds it again
        tab.get_by_text("folded: none").wait_for()
        frame.locator("g.cluster#phase-p2").wait_for()
        assert frame.locator("g.node#step-s3").count() == 1


def test_a_60_step_plan_opens_on_its_current_phase_with_readable_text(tabs, graph_page):
    with open_tab(tabs, f"{graph_page}/?phased=60", {"width": 1280, "height": 720}) as tab:
        frame = _drawn(tab)
        assert _folded(tab) == "folded: " + ", ".join(f"p{n}" for n in range(2, 13))
        assert frame.locator("g.cluster").count() == 1
        assert frame.locator("g.node.selectable").count() == 5 + 11
        texts = frame.locator("#canvas svg").evaluate(_MEASURE)
        smallest = min(t["px"] for t in texts)
        assert smallest >= MIN_PX - 0.01, smallest
        assert _misfits(texts, "60 steps, p1 open") == []
        frame.locator("g.node#phase-p5").click()
        tab.get_by_text("folded: " + ", ".join(
            f"p{n}" for n in (2, 3, 4, *range(6, 13)))).wait_for()
        frame.locator("g.cluster#phase-p5").wait_for()
        texts = frame.locator("#canvas svg").evaluate(_MEASURE)
        assert min(t["px"] for t in texts) >= MIN_PX - 0.01
