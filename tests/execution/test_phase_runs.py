"""Runs of plans in phases against the fake OpenAI-compatible server: the phase plan, rolling
expansion with earlier results in view, approval of an expansion's side effect, a failure
replanned inside its phase, a phase plan changed only when a phase cannot reach its goal,
and a phase's own done-definition."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from core.base.usage import Usage
from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions, run_plan
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.diff import diff_plans, format_diff
from core.plan.model import Phase, Plan, Step
from core.planning.phasing import plan_phases
from core.tools.toolsets import default_registry
from tests.support.fake_openai import FakeOpenAI, FakeReply, text
from tests.support.waiting import DEFAULT_TIMEOUT_S

Responder = Callable[[dict[str, Any]], FakeReply]
_PHASE = re.compile(r"You plan only the steps of phase (p\d+)")
_REPLAN = re.compile(r"Only phase (p\d+) \(")


def system_of(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def user_of(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def reply(data: dict[str, Any]) -> FakeReply:
    return text(json.dumps(data, ensure_ascii=False))


def calc(step_id: str, expression: str, *deps: str, phase: str | None = None) -> dict:
    step = {"id": step_id, "description": f"compute {expression}", "tool": "calculate",
            "args": {"expression": expression}, "depends_on": list(deps)}
    return {**step, "phase": phase} if phase else step


class Model:
    """The fake endpoint's answers by kind of request: the phase plan, a phase's steps, a
    replan inside a phase, a new phase plan, a done-definition verdict, the answer."""

    def __init__(self, *, phases: dict | None = None, expansions: dict | None = None,
                 replans: dict | None = None, revision: dict | None = None,
                 verdicts: list[bool] | None = None, checkpoints: list[dict] | None = None,
                 ) -> None:
        self.phases, self.expansions = phases, expansions or {}
        self.replans, self.revision = replans or {}, revision
        self.verdicts = list(verdicts or [])
        self.checkpoints = list(checkpoints or [])
        self.seen: list[tuple[str, str]] = []  # (kind, user message)

    def __call__(self, body: dict[str, Any]) -> FakeReply:
        system, user = system_of(body), user_of(body)
        if system.startswith("You are the checkpoint"):
            self.seen.append(("checkpoint", user))
            return reply(self.checkpoints.pop(0) if self.checkpoints else {})
        if system.startswith("You plan long tasks in two levels"):
            kind = "revise" if "cannot reach its goal" in user else "phases"
            self.seen.append((kind, user))
            return reply(self.revision if kind == "revise" else self.phases)
        if found := _PHASE.search(system):
            self.seen.append((f"expand {found[1]}", user))
            return reply(self.expansions[found[1]])
        if found := _REPLAN.search(system):
            self.seen.append((f"replan {found[1]}", user))
            return reply(self.replans[found[1]])
        if "met its success criteria" in system or "met its success criteria" in user:
            met = self.verdicts.pop(0) if self.verdicts else True
            self.seen.append(("check", user))
            return reply({"met": met, "reason": "judged"})
        self.seen.append(("answer", user))
        return text("The total is 25.")

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.seen]


def engine_on(server: FakeOpenAI, model: Model) -> Engine:
    server.responder = model
    return Engine(registry=default_registry({}), model=OpenAIChatModel(server.settings()))


THREE = {"goal": "total", "phases": [
    {"id": "p1", "title": "Numbers", "goal": "compute two numbers", "depends_on": []},
    {"id": "p2", "title": "Sum", "goal": "add them", "depends_on": ["p1"]},
    {"id": "p3", "title": "Answer", "goal": "tell the total", "depends_on": ["p2"]}]}


def test_the_phase_plan_is_one_call_that_writes_phases_and_no_steps(fake_openai):
    model = Model(phases={**THREE, "steps": [calc("s1", "1 + 1")]})
    result = plan_phases("work out the total in three stages", engine_on(fake_openai, model),
                         language="en")
    assert model.kinds() == ["phases"]
    [body] = fake_openai.chat_bodies
    assert not body.get("tools")
    assert [p.id for p in result.plan.phases] == ["p1", "p2", "p3"]
    assert result.plan.steps == [] and result.plan.validate() == []


TOTAL = {  # each phase of THREE as the model expands it
    "p1": {"steps": [calc("s1", "2 + 3"), calc("s2", "4 * 5")]},
    "p2": {"steps": [calc("s3", "{{s1.value}} + {{s2.value}}", "s1", "s2")]},
    "p3": {"steps": [{"id": "s4", "description": "Tell the total", "tool": None,
                      "depends_on": ["s3"]}]}}


def test_each_phase_is_expanded_when_reached_with_earlier_results_in_view(fake_openai):
    model = Model(expansions=TOTAL)
    plan = Plan.model_validate({**THREE, "steps": []})
    events: list[RunEvent] = []
    outcome = run_plan(plan, engine_on(fake_openai, model), on_event=events.append,
                       options=RunOptions(confirm_side_effects=False))
    assert outcome.status == "completed"
    assert model.kinds() == ["expand p1", "expand p2", "expand p3", "answer"]
    p2_prompt = dict(model.seen)["expand p2"]
    assert "- s1: " in p2_prompt and "5" in p2_prompt and "- s2: " in p2_prompt
    assert "(none yet)" in dict(model.seen)["expand p1"]
    expansions = [e for e in events if e.kind == "replanned"]
    assert [(e.data["source"], e.data["phase"], e.data["to_version"]) for e in expansions] == [
        ("expansion", "p1", 2), ("expansion", "p2", 3), ("expansion", "p3", 4)]
    final = outcome.plan
    assert final.phase_statuses() == {"p1": "completed", "p2": "completed", "p3": "completed"}
    assert final.step("s3").result["value"] == 25 and final.phases_version == 1
    assert outcome.answer == "The total is 25."


SIDE_EFFECT = {"p1": {"steps": [{"id": "s1", "description": "Look up order 88231",
                                 "tool": "query_order", "args": {"order_id": "88231"}}]},
               "p2": {"steps": [{"id": "s2", "description": "Refund it",
                                 "tool": "apply_refund",
                                 "args": {"order_id": "88231", "reason": "broken"},
                                 "depends_on": ["s1"]}]},
               "p3": {"steps": [{"id": "s3", "description": "Answer", "tool": None,
                                 "depends_on": ["s2"]}]}}


@pytest.mark.parametrize(("policy", "refund"), [("refuse", "failed"), ("approve", "completed")])
def test_an_expansion_that_brings_a_side_effect_needs_approval(fake_openai, policy, refund):
    plan = Plan.model_validate({**THREE, "steps": []})
    events: list[RunEvent] = []
    outcome = run_plan(plan, engine_on(fake_openai, Model(expansions=SIDE_EFFECT)),
                       on_event=events.append,
                       options=RunOptions(confirm_side_effects=False, new_versions=policy))
    refund_step = next(s for s in outcome.plan.steps if s.tool == "apply_refund")
    assert refund_step.status == refund
    if policy == "refuse":
        assert "needs approval" in refund_step.error
        assert outcome.status == "failed"
        assert outcome.plan.phase_statuses()["p3"] == "pending"  # never reached
    else:
        approved = [e for e in events if e.kind == "confirmed" and e.step_id is None]
        assert [e.data["steps"] for e in approved] == [[refund_step.id]]
        assert outcome.status == "completed"
    lookup = next(s for s in outcome.plan.steps if s.tool == "query_order")
    assert lookup.status == "completed"  # the read-only expansion ran on unasked


def four_phases() -> Plan:
    """p1 → (p2 ∥ p3) → p4, fully expanded; p2's second step divides by zero."""
    return Plan(goal="total", phases=[
        Phase(id="p1", title="Base"), Phase(id="p2", title="Ratio", depends_on=["p1"]),
        Phase(id="p3", title="Side", depends_on=["p1"]),
        Phase(id="p4", title="Answer", depends_on=["p2", "p3"])], steps=[
        Step(id="s1", description="base", tool="calculate", args={"expression": "10"},
             phase="p1"),
        Step(id="s2", description="double", tool="calculate",
             args={"expression": "{{s1.value}} * 2"}, depends_on=["s1"], phase="p2"),
        Step(id="s3", description="ratio", tool="calculate",
             args={"expression": "{{s2.value}} / 0"}, depends_on=["s2"], phase="p2"),
        Step(id="s4", description="side", tool="calculate",
             args={"expression": "{{s1.value}} + 1"}, depends_on=["s1"], phase="p3"),
        Step(id="s5", description="Tell the total", depends_on=["s3", "s4"], phase="p4")])


def definitions(plan: Plan, phases: set[str]) -> list[dict]:
    return [s.model_dump(include={"id", "description", "tool", "args", "depends_on", "phase"})
            for s in plan.steps if s.phase in phases]


def test_a_failure_inside_phase_2_replans_phase_2_only(fake_openai):
    model = Model(replans={"p2": {"steps": [calc("s6", "{{s2.value}} / 4", "s2")]}})
    plan = four_phases()
    before = plan.model_copy(deep=True)
    events: list[RunEvent] = []
    outcome = run_plan(plan, engine_on(fake_openai, model), on_event=events.append,
                       options=RunOptions(confirm_side_effects=False))
    assert model.kinds() == ["replan p2", "answer"]
    [replan] = [e for e in events if e.kind == "replanned"]
    assert replan.data["source"] == "failure"
    final = outcome.plan
    assert final.version == 2 and final.phases_version == before.phases_version == 1
    assert final.phases == before.phases  # the phase plan is as it was
    assert definitions(final, {"p1", "p3"}) == definitions(before, {"p1", "p3"})
    assert [s.id for s in final.steps_of("p2")] == ["s2", "s6"]  # s2 kept, s3 replaced
    assert final.step("s2").status == "completed" and final.step("s6").result["value"] == 5
    assert final.step("s5").depends_on == ["s4", "s6"]  # the answer waits on the new step
    prompt = dict(model.seen)["replan p2"]
    assert "s3: ratio" in prompt and "division" in prompt.lower()
    assert "s4" not in prompt.split("Results of")[0]  # the other phases are not shown
    assert outcome.status == "completed"
    assert set(final.phase_statuses().values()) == {"completed"}
    diff = diff_plans(before, final)
    assert not diff.phase_level and [s.id for s in diff.added] == ["s6"]


def test_a_phase_that_cannot_reach_its_goal_changes_the_phase_plan(fake_openai):
    model = Model(
        replans={"p2": {"phase_unreachable": True, "reason": "nothing divides by zero"}},
        revision={"phases": [
            {"id": "p1", "title": "Base"},
            {"id": "p5", "title": "Estimate", "goal": "estimate instead",
             "depends_on": ["p1"]}]},
        expansions={"p5": {"steps": [calc("s7", "{{s1.value}} / 2", "s1")]}})
    plan = four_phases()
    events: list[RunEvent] = []
    outcome = run_plan(plan, engine_on(fake_openai, model), on_event=events.append,
                       options=RunOptions(confirm_side_effects=False))
    assert model.kinds()[:3] == ["replan p2", "revise", "expand p5"]
    changed = next(e for e in events if e.kind == "replanned")
    assert changed.data["source"] == "phases"
    revised = changed.plan
    assert revised.phases_version == 2
    assert revised.phase("p2").dropped == "nothing divides by zero"
    assert revised.phase_status("p2") == "skipped"
    assert [s.id for s in revised.steps_of("p2")] == ["s2"]  # what it ran stays
    assert definitions(revised, {"p1", "p3"}) == definitions(four_phases(), {"p1", "p3"})
    assert {s.status for s in revised.steps_of("p3")} == {"completed"}  # ran beside p2
    diff = diff_plans(plan, revised)
    assert diff.phase_level
    assert [p.id for p in diff.phases_added] == ["p5"]
    assert [p.id for p in diff.phases_removed] == ["p4"]  # not started: replaced
    assert [(c.new.id, c.fields) for c in diff.phases_changed] == [("p2", ["dropped"])]
    text_diff = format_diff(diff)
    assert "+ added phase p5: Estimate" in text_diff
    assert "~ changed phase p2: dropped: — → nothing divides by zero" in text_diff
    assert outcome.plan.phase_statuses() == {"p1": "completed", "p2": "skipped",
                                             "p3": "completed", "p5": "completed"}
    assert outcome.status == "completed"  # the new phase plan was carried out


def test_a_phase_that_misses_its_done_definition_is_replanned_inside_it(fake_openai):
    model = Model(verdicts=[False, True],
                  replans={"p1": {"steps": [calc("s3", "{{s1.value}} + 100", "s1")]}})
    plan = Plan(goal="total", phases=[
        Phase(id="p1", title="Numbers", done_when="the total is over 100"),
        Phase(id="p2", title="Answer", depends_on=["p1"])], steps=[
        Step(id="s1", description="start", tool="calculate", args={"expression": "5"},
             phase="p1"),
        Step(id="s2", description="Tell the total", depends_on=["s1"], phase="p2")])
    outcome = run_plan(plan, engine_on(fake_openai, model),
                       options=RunOptions(confirm_side_effects=False))
    assert model.kinds() == ["check", "replan p1", "check", "answer"]
    failure = dict(model.seen)["replan p1"]
    assert 'did not meet its done-definition "the total is over 100"' in failure
    assert outcome.status == "completed"
    assert [s.id for s in outcome.plan.steps_of("p1")] == ["s1", "s3"]


def test_a_phased_run_as_a_workflow_records_each_expansion_as_a_version(fake_openai, runner):
    model = Model(expansions=TOTAL)
    engine = engine_on(fake_openai, model)
    run_id = runner.start("total", Plan.model_validate({**THREE, "steps": []}), engine=engine,
                          options=RunOptions(confirm_side_effects=False, max_attempts=1))
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    versions = runner.store.plan_versions(run_id)
    assert [(v.version, v.source) for v in versions] == [
        (1, "draft"), (2, "expansion"), (3, "expansion"), (4, "expansion")]
    assert versions[0].plan.steps == [] and len(versions[-1].plan.steps) == 4
    assert record.plan.phase_statuses() == {"p1": "completed", "p2": "completed",
                                            "p3": "completed"}
    assert record.answer == "The total is 25."


def two_phases() -> Plan:
    return Plan(goal="total", phases=[
        Phase(id="p1", title="Numbers"), Phase(id="p2", title="Answer", depends_on=["p1"])],
        steps=[Step(id="s1", description="start", tool="calculate", args={"expression": "5"},
                    phase="p1"),
               Step(id="s2", description="more", tool="calculate", args={"expression": "6"},
                    phase="p1"),
               Step(id="s3", description="Tell the total", depends_on=["s1", "s2"],
                    phase="p2")])


def test_a_checkpoint_works_inside_the_phase_under_way(fake_openai):
    added = {"id": "s9", "description": "double it", "tool": "calculate",
             "args": {"expression": "{{s1.value}} * 2"}, "depends_on": ["s1"]}
    model = Model(checkpoints=[{"needs_replan": True, "reason": "add a step",
                                "updated_pending_steps": [
        added, {"id": "s2", "description": "more", "tool": "calculate",
                "args": {"expression": "6"}}]}])
    outcome = run_plan(two_phases(), engine_on(fake_openai, model),
                       options=RunOptions(confirm_side_effects=False, checkpoint="adaptive",
                                          max_parallel=1))
    new = next(s for s in outcome.plan.steps if s.description == "double it")
    assert new.phase == "p1" and new.status == "completed"  # it joined the phase under way
    assert new.id in outcome.plan.step("s3").depends_on  # the answer waits on it too
    assert outcome.plan.step("s3").phase == "p2"
    assert outcome.status == "completed"


def test_a_checkpoint_that_changes_another_phase_is_refused(fake_openai):
    model = Model(checkpoints=[{"needs_replan": True, "reason": "rewrite the answer",
                                "updated_pending_steps": [
        {"id": "s2", "description": "more", "tool": "calculate", "args": {"expression": "6"}},
        {"id": "s3", "description": "Only the first number", "tool": None,
         "depends_on": ["s1"]}]}])
    outcome = run_plan(two_phases(), engine_on(fake_openai, model),
                       options=RunOptions(confirm_side_effects=False, checkpoint="adaptive",
                                          max_parallel=1))
    assert outcome.plan.version == 1
    assert outcome.plan.step("s3").description == "Tell the total"
    assert any("changes s3 of another phase than p1" in w for w in outcome.warnings)


def test_a_run_whose_plan_only_expanded_its_phases_asks_for_no_review(fake_openai):
    from core.learning.reflection import review_success
    from core.plan.versions import only_expanded, without_expansions

    model = Model(expansions=TOTAL)
    engine = engine_on(fake_openai, model)
    outcome = run_plan(Plan.model_validate({**THREE, "steps": []}), engine,
                       options=RunOptions(confirm_side_effects=False))
    assert len(outcome.versions) == 4
    assert all(only_expanded(a, b) for a, b in itertools.pairwise(outcome.versions))
    assert without_expansions(outcome.versions) == [outcome.versions[-1]]
    calls = len(fake_openai.chat_bodies)
    assert review_success(without_expansions(outcome.versions), engine) == (None, Usage())
    assert len(fake_openai.chat_bodies) == calls  # no model call for a plan that did not change


def test_a_phase_expansion_spends_the_run_model_call_budget(fake_openai):
    model = Model(expansions=TOTAL)
    plan = Plan.model_validate({**THREE, "steps": []})
    outcome = run_plan(plan, engine_on(fake_openai, model),
                       options=RunOptions(confirm_side_effects=False, max_model_calls=2))
    assert model.kinds() == ["expand p1", "expand p2"]  # p3's expansion was not asked for
    assert len(fake_openai.chat_bodies) == 2
    assert outcome.status == "failed"
    assert outcome.plan.steps_of("p3") == []
    assert any("Phase p3 was not expanded" in w and "all 2 model calls" in w
               for w in outcome.warnings)
    assert outcome.plan.step("s3").result["value"] == 25  # what it found is kept
