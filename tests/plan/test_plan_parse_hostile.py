"""The parser and validation on hostile input: a plan or PlanParseError, never a crash."""

from __future__ import annotations

import json
import re
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.base.messages import render
from core.errors import PlanParseError
from core.plan.model import Plan
from core.plan.parse import parse_plan
from tests.support.fuzzing import FUZZ
from tests.support.hostile_plans import CATEGORIES, hostile_replies


def _parse_or_none(reply: str) -> Plan | None:
    try:
        return parse_plan(reply, "")
    except PlanParseError as exc:
        assert str(exc)  # a sentence, not an empty error
        return None


def _check_usable(plan: Plan) -> None:
    problems = [str(problem) for problem in plan.validate()]
    assert all(isinstance(p, str) and p for p in problems)
    plan.to_json().encode("utf-8")  # storable: no lone surrogates, nothing unserialisable


@cache
def _replies_by_category() -> dict[str, list[str]]:
    """Twelve generated replies of each category, made once for the module's cases."""
    found: dict[str, list[str]] = {}
    for name, reply in hostile_replies(per_category=12):
        found.setdefault(name, []).append(reply)
    return found


@pytest.mark.parametrize("category", sorted(CATEGORIES))
def test_generated_replies_give_a_plan_or_the_projects_own_error(category):
    replies = _replies_by_category()[category]
    assert len(replies) == 12
    for reply in replies:
        plan = _parse_or_none(reply)
        if plan is not None:
            _check_usable(plan)


@FUZZ
@given(st.text(max_size=400))
def test_any_text_gives_a_plan_or_the_projects_own_error(text):
    plan = _parse_or_none(text)
    if plan is not None:
        _check_usable(plan)


_ID = st.one_of(st.integers(-3, 12), st.sampled_from(["s1", "s2", "s-1", "step_3", " ", "x", "x"]),
                st.text(max_size=6))


@FUZZ
@given(st.lists(st.tuples(_ID, st.lists(_ID, max_size=3)), min_size=1, max_size=6))
def test_no_id_is_rewritten_or_rebound_silently(rows):
    raw = [{"id": step_id, "description": f"d{n}", "depends_on": deps}
           for n, (step_id, deps) in enumerate(rows)]
    plan = _parse_or_none(json.dumps({"steps": raw}))
    if plan is None:
        return
    warned = " ".join(plan.warnings)
    for source, step in zip(raw, plan.steps, strict=True):
        written = source["id"]
        plain = written == step.id or (type(written) is int and f"s{written}" == step.id) or (
            isinstance(written, str) and _written_as(written) == f"#{step.id[1:]}")
        assert plain or step.id in warned or isinstance(written, bool) or (
            isinstance(written, str) and not written.strip()), (written, step.id, warned)
    ids = set(plan.ids())
    for source, step in zip(raw, plan.steps, strict=True):
        if step is plan.steps[-1] and not [d for d in source["depends_on"] if d != ""]:
            continue  # the synthesis step reads every earlier step by design
        for dep in step.depends_on:
            if dep not in ids:
                continue  # left as written: validation reports it
            named = {_written_as(d) for d in source["depends_on"]}
            targets = [s for position, (s, src) in enumerate(zip(plan.steps, raw, strict=True))
                       if _written_as(src["id"]) in named
                       or (_nameless(src["id"]) and f"#{position + 1}" in named)]
            assert any(s.id == dep for s in targets), (source, step)


def _written_as(step_id: object) -> str:
    """How a person reads an id: "s3", "3" and 3 all name step 3."""
    text = str(step_id).strip().lower()
    match = re.fullmatch(r"(?:s|step_)?(\d+)", text)
    return f"#{int(match.group(1))}" if match else text


def _nameless(step_id: object) -> bool:
    """A step the reply gave no id: references may name it by its position."""
    return step_id is None or isinstance(step_id, bool) or (
        isinstance(step_id, str) and not step_id.strip())


def test_think_floods_and_fences_parse_in_one_pass():
    flood = "<think>" * 30_000 + '{"steps": [{"id": "s1", "description": "x"}]}'
    with pytest.raises(PlanParseError, match="only a <think> block"):
        parse_plan(flood, "g")
    closed = "<think>" * 3 + "</think>" + '{"steps": [{"id": "s1", "description": "x"}]}'
    assert parse_plan(closed, "g").ids() == ["s1"]
    fences = "```" * 50_001 + '{"steps": [{"id": "s1", "description": "x"}]}'
    assert parse_plan(fences, "g").ids() == ["s1"]


def test_deep_nesting_is_refused_with_a_reason():
    with pytest.raises(PlanParseError, match="nested deeper than 32 levels"):
        parse_plan("[" * 100_000, "g")
    nested_args = {"steps": [{"id": "s1", "description": "x", "args": {"a": [[[[[[[[]]]]]]]]}}]}
    assert parse_plan(json.dumps(nested_args), "g").steps[0].args == nested_args["steps"][0]["args"]


def test_lone_surrogates_are_replaced_and_the_plan_stores():
    plan = parse_plan('{"steps": [{"id": "s1", "description": "a\\ud800b"}]}' + "\ud800", "g")
    assert plan.steps[0].description == "a\ufffdb"
    plan.to_json().encode("utf-8")


def test_duplicate_ids_are_warned_and_their_references_left_for_validation():
    reply = json.dumps({"steps": [
        {"id": "a", "description": "first"}, {"id": "a", "description": "second"},
        {"id": "b", "description": "uses a", "depends_on": ["a"]}]})
    plan = parse_plan(reply, "g")
    assert plan.ids() == ["s1", "s2", "s3"]
    assert "s1, s2 all had the id 'a'; references to it are ambiguous and left as written" in (
        plan.warnings)
    assert plan.step("s3").depends_on == ["a"]
    assert "s3 depends on unknown step a" in map(str, plan.validate())


def test_a_minus_sign_is_not_a_step_number():
    reply = json.dumps({"steps": [{"id": "s-1", "description": "x"},
                                  {"id": "s2", "description": "y", "depends_on": ["s-1"]}]})
    plan = parse_plan(reply, "g")
    assert plan.ids() == ["s1", "s2"]
    assert plan.step("s2").depends_on == ["s1"]  # by its written id, not by reading "-1"
    assert "step id 's-1' is now s1" in plan.warnings


def test_a_number_no_step_has_stays_dangling_instead_of_binding_by_position():
    reply = json.dumps({"steps": [{"id": 5, "description": "x"}, {"id": "x", "description": "y"},
                                  {"id": 9, "description": "z", "depends_on": [2]}]})
    plan = parse_plan(reply, "g")
    assert plan.step("s3").depends_on == ["2"]
    assert "s3 depends on unknown step 2" in map(str, plan.validate())


def test_whitespace_ids_are_numbered_by_position():
    reply = json.dumps({"steps": [{"id": " " * 20_000, "description": "x"},
                                  {"id": "\t", "description": "y"}]})
    assert parse_plan(reply, "g").ids() == ["s1", "s2"]


def test_cycles_name_exactly_their_steps_even_beside_other_problems():
    plan = Plan(goal="g", steps=[
        {"id": "s1", "description": ""},
        {"id": "s2", "description": "b", "depends_on": ["s3"]},
        {"id": "s3", "description": "c", "depends_on": ["s2"]},
        {"id": "s4", "description": "d", "depends_on": ["s3", "s9"]},
    ])
    problems = [str(problem) for problem in plan.validate()]
    assert "s2, s3 form a dependency cycle; remove one link" in problems
    assert "s4 depends on unknown step s9" in problems
    assert plan.cycles() == [["s2", "s3"]]
    assert "s2、s3" not in " ".join(problems)
    assert "s2, s3 形成了循环依赖；请去掉其中一条依赖" in [render(p, "zh") for p in plan.validate()]


def test_a_long_chain_orders_and_validates():
    steps = [{"id": f"s{i}", "description": "d", "depends_on": [f"s{i - 1}"] if i > 1 else []}
             for i in range(1, 20_001)]
    plan = Plan(goal="g", steps=steps)
    assert plan.validate() == []
    assert plan.critical_path_length() == 20_000
    assert [s.id for s in plan.topological_order()][:3] == ["s1", "s2", "s3"]
