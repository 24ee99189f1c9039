"""Exports of hostile text: DOT that Graphviz accepts, well-formed SVG, a Markdown report
that forms no image, tag or link from the run's text (regressions and properties)."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.plan.graph import plan_to_dot
from core.plan.model import Plan, Step
from core.runs.export import render_svg, run_to_markdown
from core.store.schema import PlanVersion, RunRecord
from tests.support.fuzzing import FUZZ
from tests.support.markdown_tokens import kinds, tokens

HOST = "http://127.0.0.1:9/p.png?d=secret"
HOSTILE = (f"a\x00b\x1bc\x07 &#0; &#x1b; &nbsp; &amp; \ufffe\uffff \ud800 \x85 "
           f'<b>x</b> ]]> \\N \\ " ![x]({HOST}) <img src="{HOST}"> <{HOST}>')
TAG = re.compile(r"<[A-Za-z/!?]")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed")

TEXT = st.one_of(
    st.text(alphabet=st.sampled_from(list('![]()<>`*_&#;x0\\"|\n\x00\x1b\ufffe ab')),
            max_size=60),
    st.text(max_size=60),
)


def _plan(description: str, *, result: object = None, error: str | None = None,
          step_id: str = "s2", tool: str | None = None, condition: str | None = None) -> Plan:
    first = Step(id="s1", description="Look up order 88231", tool="query_order",
                 args={"order_id": "88231"})
    second = Step(id=step_id, description=description, tool=tool, condition=condition,
                  depends_on=["s1", "s9"])
    first.advance("running")
    first.advance("completed")
    first.result = result
    second.advance("running")
    second.advance("failed")
    second.error = error
    return Plan(goal=description, steps=[first, second])


def _svg(plan: Plan) -> ET.Element:
    return ET.fromstring(render_svg(plan_to_dot(plan, side_effect_tools={"query_order"})))


def _record(plan: Plan, request: str, answer: str) -> tuple[RunRecord, list[PlanVersion]]:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    record = RunRecord(run_id="r1", request=request, status="failed", answer=answer,
                       settings={"model": request}, created_at=now, updated_at=now, plan=plan)
    return record, [PlanVersion(version=1, plan=plan, source="draft", reason=request,
                                created_at=now)]


@needs_dot
def test_nul_and_esc_in_a_description_give_valid_dot_and_well_formed_svg():
    plan = _plan("refund\x00 order\x1b[31m 88231", condition="s1\x00 ok")
    dot = plan_to_dot(plan)
    assert "\x00" not in dot and "\x1b" not in dot
    svg = _svg(plan)
    texts = " ".join(node.text or "" for node in svg.iter() if node.tag.endswith("text"))
    assert "refund order[31m 88231" in texts


@needs_dot
def test_entities_non_characters_and_surrogates_stay_out_of_the_svg():
    svg = _svg(_plan(HOSTILE, step_id="s2&#0;\x00", tool="t&#x1b;"))
    texts = " ".join(node.text or "" for node in svg.iter())
    assert "&#0;" in texts and "&#x1b;" in texts  # shown as typed, not read as characters
    assert not re.search("[\x00-\x08\x0b-\x1f\ufffe\uffff]", texts)


@needs_dot
def test_ids_past_graphviz_string_limit_still_draw():
    long_id = "s" + "x" * 20_000
    plan = Plan(goal="g", steps=[Step(id=long_id, description=""),
                                 Step(id="s2", description="", depends_on=[long_id, "y" * 20_000])])
    titles = [n.text for n in _svg(plan).iter() if n.tag.endswith("title")]
    assert len(titles) == 6  # the graph, three nodes (one missing) and two edges


def test_markdown_report_of_hostile_text_has_no_image_tag_or_link():
    plan = _plan(HOSTILE, result=HOSTILE, error=HOSTILE, step_id=f"s2{HOSTILE}")
    text = run_to_markdown(*_record(plan, HOSTILE, f"**Done** ![x]({HOST})\n\n{HOSTILE}"))
    assert "![" not in text and not TAG.search(text)
    found = kinds(text)
    assert not found & {"image", "html_inline", "html_block"}
    assert {"strong_open", "link_open"} <= found  # the answer keeps its Markdown (a link)
    assert "link_open" not in kinds(run_to_markdown(*_record(plan, HOSTILE, "Done")))
    assert "\x00" not in text and "\x1b" not in text and "\ud800" not in text


def test_a_result_cannot_close_its_code_block():
    plan = _plan("d", result="````\n# not a heading\n```` \n![x](y)")
    text = run_to_markdown(*_record(plan, "r", "a"))
    blocks = [t.content for t in tokens(text) if t.type == "fence"]
    assert [b.replace("\u2060", "") for b in blocks] == ["````\n# not a heading\n```` \n![x](y)\n"]


@needs_dot
@settings(FUZZ, max_examples=60)  # each example runs Graphviz once
@given(description=TEXT, step_id=TEXT, tool=TEXT, condition=TEXT)
def test_any_text_in_a_plan_gives_dot_graphviz_renders_and_svg_that_parses(
        description, step_id, tool, condition):
    _svg(_plan(description, step_id=step_id or "s2", tool=tool or None,
               condition=condition or None))


@FUZZ
@given(request=TEXT, description=TEXT, result=st.one_of(TEXT, st.dictionaries(TEXT, TEXT)),
       error=TEXT, answer=TEXT, step_id=TEXT)
def test_any_text_in_a_run_gives_a_report_without_images_or_tags(
        request, description, result, error, answer, step_id):
    plan = _plan(description, result=result, error=error or None, step_id=step_id or "s2")
    text = run_to_markdown(*_record(plan, request, answer))
    assert "![" not in text and not TAG.search(text)
    assert not kinds(text) & {"image", "html_inline", "html_block"}
