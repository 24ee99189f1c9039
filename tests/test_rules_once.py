"""A rule the engine keeps is written once, where its concept lives.

Copies drift: the side-effect test had inline versions that disagreed about a tool the
registry does not know, and the step-id pattern was compiled in five modules. These tests
find a second spelling of either in core/.
"""

from __future__ import annotations

import re

import pytest

from core.plan.approval import has_side_effect
from core.plan.model import Plan, Step, step_number
from core.tools.registry import ToolRegistry, make_tool
from tests.support import REPO

# a step's side effect read from the registry by hand instead of has_side_effect
INLINE_SIDE_EFFECT = re.compile(r"\.get\(\s*step\.tool[^)]*\)\s*\.side_effect")
# a pattern for a whole step id (s1, s2, …) compiled anywhere
STEP_ID_PATTERN = re.compile(r"""re\.compile\(\s*r?["']\^s\(?\\d\+\)?\$""")


def _sources() -> dict[str, str]:
    return {str(path.relative_to(REPO)): path.read_text(encoding="utf-8")
            for path in sorted((REPO / "core").rglob("*.py"))}


@pytest.mark.parametrize(("pattern", "home"), [
    (INLINE_SIDE_EFFECT, "core/plan/approval.py"),
    (STEP_ID_PATTERN, "core/base/step_id.py"),
])
def test_the_rule_is_spelled_only_at_home(pattern, home):
    found = sorted(path for path, text in _sources().items() if pattern.search(text))
    assert found in ([], [home]), found


@pytest.mark.parametrize(("pattern", "text"), [
    (INLINE_SIDE_EFFECT, 'registry.get(step.tool or "").side_effect'),
    (INLINE_SIDE_EFFECT, "engine.registry.get(\n            step.tool).side_effect"),
    (STEP_ID_PATTERN, 'STEP = re.compile(r"^s(\\d+)$")'),
    (STEP_ID_PATTERN, "STEP = re.compile(r'^s\\d+$')"),
])
def test_the_finders_catch_a_second_spelling(pattern, text):
    assert pattern.search(text)


def test_an_unknown_tool_counts_as_a_side_effect_everywhere():
    def look(order_id: str) -> dict[str, str]:
        """Look an order up.

        Args:
            order_id: the order.
        """
        return {"order_id": order_id}

    registry = ToolRegistry()
    registry.add(make_tool(look, read_only=True))
    plan = Plan(goal="g", steps=[Step(id="s1", description="a", tool="look"),
                                 Step(id="s2", description="b", tool="gone"),
                                 Step(id="s3", description="c")])
    assert [has_side_effect(s, registry) for s in plan.steps] == [False, True, False]


@pytest.mark.parametrize(("step_id", "number"), [("s1", 1), ("s042", 42), ("s", None),
                                                  ("S1", None), ("s1a", None), ("x1", None)])
def test_a_step_id_has_one_pattern(step_id, number):
    assert step_number(step_id) == number
