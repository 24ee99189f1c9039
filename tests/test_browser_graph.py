"""The plan graph component in Chromium: readable text, labels inside nodes, click, pan, zoom.

tests/apps/graph_page.py shows the churn scenario's offline plan (six steps, five side by
side) with ui.graph_view.plan_graph, full width or in the run page's narrow column, in
English or Chinese. Measured in the browser at 1280x720 and 1440x900: every text of the
graph renders at 11 px or more (its font size times the SVG's scale), and every text box
lies inside its node's shape. A click on a node reaches the page's on_select, also a
second click on the same node; a drag pans without selecting.
"""

from __future__ import annotations

import re

import pytest

from tests.browser import needs_chromium, open_browser, serve_app

pytestmark = needs_chromium

APP = "tests/apps/graph_page.py"
FRAME = "iframe[title='ui.graph_view.plan_graph']"
MIN_PX = 11
SLACK_PX = 0.5  # sub-pixel rounding of the boxes
VIEWPORTS = [(1280, 720), (1440, 900)]

# For each text of the graph: its rendered font size in px and whether its box lies inside
# its node's shape (the first path/polygon of the node's group).
_MEASURE = """slack => {
  const svg = document.querySelector('#canvas svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll('text')].map(text => {
    const node = text.closest('g.node');
    const box = text.getBoundingClientRect();
    const shape = node && node.querySelector('path, polygon').getBoundingClientRect();
    const inside = !shape || (box.left >= shape.left - slack && box.right <= shape.right + slack
      && box.top >= shape.top - slack && box.bottom <= shape.bottom + slack);
    return {text: text.textContent, node: node && node.id,
            px: parseFloat(getComputedStyle(text).fontSize) * scale, inside};
  });
}"""


@pytest.fixture
def graph_page(isolated_environment, tmp_path):
    """The graph test page served; yields its address."""
    with serve_app(isolated_environment, tmp_path / "streamlit.log", script=APP) as url:
        yield url


def _open(tab, url: str):
    """Load ``url`` and wait for the graph's SVG; the component's frame."""
    tab.goto(url)
    frame = tab.frame_locator(FRAME)
    frame.locator("#canvas svg g.node").first.wait_for()
    return frame


def test_graph_text_is_readable_and_inside_its_nodes(graph_page):
    problems: list[str] = []
    smallest = 99.0
    with open_browser(graph_page) as tab:
        for width, height in VIEWPORTS:
            tab.set_viewport_size({"width": width, "height": height})
            for lang in ("en", "zh"):
                for narrow in ("0", "1"):
                    where = f"{width}x{height} {lang} narrow={narrow}"
                    frame = _open(tab, f"{graph_page}/?lang={lang}&narrow={narrow}")
                    texts = frame.locator("#canvas svg").evaluate(
                        f"(_, slack) => ({_MEASURE})(slack)", SLACK_PX)
                    assert len(texts) >= 12, where  # six nodes: a header and a description each
                    smallest = min(smallest, *(t["px"] for t in texts))
                    problems += [f"{where}: {t['text']!r} at {t['px']:.2f} px"
                                 for t in texts if t["px"] < MIN_PX - 0.01]
                    problems += [f"{where}: {t['text']!r} spills out of {t['node']}"
                                 for t in texts if not t["inside"]]
    assert not problems, "\n".join(problems)
    assert smallest >= MIN_PX - 0.01


def _selected(tab) -> str:
    return tab.get_by_text(re.compile(r"^selected: ")).inner_text()


def test_click_selects_every_time_and_drag_pans(graph_page):
    with open_browser(graph_page) as tab:
        tab.set_viewport_size({"width": 1280, "height": 720})
        frame = _open(tab, f"{graph_page}/?lang=zh&narrow=1")
        for step, clicks in (("s3", 1), ("s3", 2), ("s1", 3)):
            frame.locator(f"g#step-{step}").click()
            tab.get_by_text(f"selected: {step} ({clicks} clicks)").wait_for()
        assert frame.locator("g.node.selected").get_attribute("id") == "step-s1"

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
