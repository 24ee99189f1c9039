"""Plan checks have one shape and one list; the checks for weak models follow the provider."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil

import pytest

import core.planning.checks as checks_package
from core.base.message_texts import TEXTS
from core.errors import PlanValidationError
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.llm.providers import PROFILES
from core.llm.settings import LLMSettings
from core.plan.model import Plan
from core.planning.checks import (
    CHECKS,
    Check,
    Pipeline,
    all_checks,
    check_context,
    run_checks,
)
from core.planning.checks.shape import STAGES, Problem
from core.planning.planner import plan_request
from core.runs.session import request_language
from core.tools.toolsets import default_registry
from demo.checks import DEMO_CHECKS
from demo.scenarios import get_scenario

SHAPE_MODULES = {"shape"}  # the shape every check has, not a check
SEED = get_scenario("shop-refund")


def test_every_check_module_is_wired_once_in_the_one_list():
    modules = {info.name for info in pkgutil.iter_modules(checks_package.__path__)}
    wired = [check.run.__module__.rsplit(".", 1)[-1] for check in CHECKS]
    assert sorted(wired) == sorted(modules - SHAPE_MODULES)  # each module once, none missing
    for name in modules - SHAPE_MODULES:
        module = importlib.import_module(f"core.planning.checks.{name}")
        assert module.CHECK in CHECKS, name
    assert len({check.name for check in CHECKS}) == len(CHECKS)


def test_every_check_module_says_whom_it_is_for():
    """A check is a workaround for weak models or a protection for every model: its module
    says which, since the shape has no default for it."""
    modules = [importlib.import_module(f"core.planning.checks.{info.name}")
               for info in pkgutil.iter_modules(checks_package.__path__)
               if info.name not in SHAPE_MODULES]
    for module in [*modules, importlib.import_module("demo.checks")]:
        source = inspect.getsource(module)
        assert "weak_models_only=" in source[source.index("= Check("):], module.__name__
    with pytest.raises(TypeError, match="weak_models_only"):
        Check(name="unsaid", kind="repair", stages=frozenset({"draft"}),  # type: ignore[call-arg]
              run=lambda plan, context: [])


@pytest.mark.parametrize("check", [*CHECKS, *DEMO_CHECKS], ids=lambda check: check.name)
def test_every_check_declares_its_kind_and_stages(check: Check):
    assert check.kind in ("repair", "problem", "final")
    assert check.stages and check.stages <= set(STAGES)


def test_the_demo_packs_checks_run_after_the_engines_and_only_with_the_pack():
    assert all_checks(default_registry({})) == [*CHECKS, *DEMO_CHECKS]
    assert all_checks(default_registry({"PLANBOARD_TOOLSETS": "builtin"})) == list(CHECKS)


def _dropped_clause_with_invented_id() -> Plan:
    return Plan.model_validate({"goal": SEED.request_en, "steps": [
        {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
         "args": {"order_id": "88231"}},
        {"id": "s2", "description": "Track its parcel", "tool": "query_logistics",
         "args": {"tracking_no": "SF0000000000"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "Answer", "depends_on": ["s1", "s2"]}]})


def test_problems_are_structured_and_worded_only_where_shown():
    registry = default_registry({})
    context = check_context(SEED.request_en, registry, "draft",
                            language=request_language(SEED.request_en))
    problems = run_checks(_dropped_clause_with_invented_id(), context, "problem")
    assert problems and all(isinstance(p, Problem) and p.code in TEXTS for p in problems)
    codes = {p.code for p in problems}
    assert {"check.uncovered", "check.invented_id"} <= codes
    invented = next(p for p in problems if p.code == "check.invented_id")
    assert invented.step == "s2" and invented.params["name"] == "tracking_no"
    assert "既不在请求中" in invented.worded("zh") and "neither in the request" in (
        invented.worded("en"))


def test_checks_for_weak_models_are_switched_off_by_the_profile_not_the_protections():
    registry = default_registry({})
    strong = check_context(SEED.request_en, registry, "draft",
                           model=OpenAIChatModel(LLMSettings(api_key="sk-x")),
language=request_language(SEED.request_en))
    assert strong.weak_models is False  # api.openai.com: the openai profile
    codes = {p.code for p in run_checks(_dropped_clause_with_invented_id(), strong, "problem")}
    assert "check.uncovered" not in codes  # clause coverage is for weak models
    assert "check.invented_id" in codes  # an invented id is a problem for every model


@pytest.mark.parametrize(("name", "weak"), [
    ("openai", False), ("deepseek", False), ("dashscope", False), ("generic", True),
    ("ollama", True), ("lmstudio", True), ("vllm", True), ("llamacpp", True)])
def test_which_profiles_get_the_weak_model_checks(name: str, weak: bool):
    assert PROFILES[name].weak_model_checks is weak


def test_the_switch_can_be_set_either_way():
    on = LLMSettings.from_env({"PLANBOARD_PROVIDER": "openai",
                               "PLANBOARD_WEAK_MODEL_CHECKS": "on"})
    off = LLMSettings.from_env({"PLANBOARD_PROVIDER": "llamacpp",
                                "PLANBOARD_WEAK_MODEL_CHECKS": "off"})
    auto = LLMSettings.from_env({"PLANBOARD_PROVIDER": "llamacpp",
                                 "PLANBOARD_WEAK_MODEL_CHECKS": "auto"})
    assert (on.profile.weak_model_checks, off.profile.weak_model_checks,
            auto.profile.weak_model_checks) == (True, False, True)
    with pytest.raises(Exception, match="neither on nor off"):
        LLMSettings.from_env({"PLANBOARD_WEAK_MODEL_CHECKS": "sometimes"})


def test_a_hosted_model_is_not_sent_back_for_a_weak_model_heuristic(fake_openai):
    """The same dropped clause: sent back to a local model, kept as it is for openai."""
    registry = default_registry({})
    reply = json.dumps(_dropped_clause_with_invented_id().canonical())
    fake_openai.script(reply, reply, reply)
    with OpenAIChatModel(fake_openai.settings(provider="openai")) as model:
        hosted = plan_request(SEED.request_en, Engine(registry=registry, model=model),
                              language=request_language(SEED.request_en))
    assert hosted.attempts == 2  # sent back once, for the invented id only
    corrective = fake_openai.chat_bodies[1]["messages"][-1]["content"]
    assert "SF0000000000" in corrective and "No step covers" not in corrective


def test_a_repair_is_named_on_the_plan_with_what_it_changed():
    plan = Plan.model_validate({"goal": "What is 6*7, times 2?", "steps": [
        {"id": "s1", "description": "Multiply", "tool": "calculate",
         "args": {"expression": "6*7"}},
        {"id": "s2", "description": "Double it", "tool": "calculate",
         "args": {"expression": "{{s1.value}} * 2"}}]})
    checks = Pipeline(check_context(plan.goal, default_registry({}), "draft", language="en"))
    checks.settle(checks.accept(plan))
    notes = [(n.check, n.action, n.detail) for n in plan.check_notes]
    assert ("implied_dependencies", "changed", "s2 depends_on: — → s1") in notes
    assert ("synthesis", "changed", "added s3") in notes
    assert not plan.warnings  # both complete what the plan says: no warning for a person


def test_what_was_sent_back_and_what_stays_a_warning_are_named_by_their_check(fake_openai):
    registry = default_registry({})
    reply = json.dumps(_dropped_clause_with_invented_id().canonical())
    fake_openai.script(reply, reply)
    with OpenAIChatModel(fake_openai.settings()) as model:  # generic: weak checks on
        plan = plan_request(SEED.request_en, Engine(registry=registry, model=model),
                            language=request_language(SEED.request_en)).plan
    notes = [(note.check, note.action) for note in plan.check_notes]
    assert ("coverage", "sent_back") in notes and ("grounding", "sent_back") in notes
    assert ("coverage", "warned") in notes
    # the invented tracking number is removed: that change is named, and the warning the
    # final repair took back is no longer one
    removed = next(n for n in plan.check_notes if n.check == "clear_invented")
    assert removed.action == "changed" and removed.step == "s2" and "SF0000000000" in (
        removed.detail)
    assert ("grounding", "warned") not in notes
    assert {n.detail for n in plan.check_notes if n.action == "warned"} <= set(plan.warnings)


def test_a_checkpoints_decision_gets_the_checks_of_the_model_that_decided():
    """A hosted model's checkpoint is not judged by the checks meant for weak models."""
    from core.planning.checkpoint import CheckpointDecision, apply_decision

    plan = Plan.model_validate({"goal": "What is 6*7?", "steps": [
        {"id": "s1", "description": "Multiply", "tool": "calculate",
         "args": {"expression": "6*7"}, "status": "completed", "result": {"value": 42}},
        {"id": "s2", "description": "Answer", "depends_on": ["s1"]}]})
    decision = CheckpointDecision(needs_replan=True, updated_pending_steps=[
        {"id": "s3", "description": "Check", "tool": "calculate",
         "args": {"expression": "{{s1.value}} + 0"}},
        {"id": "s2", "description": "Answer", "depends_on": ["s1", "s3"]}])
    hosted = OpenAIChatModel(LLMSettings(api_key="sk-x"))
    with pytest.raises(PlanValidationError, match="s3 refers to"):  # no implied link
        apply_decision(plan, decision, default_registry({}), model=hosted)
    local = apply_decision(plan, decision, default_registry({}))
    assert local.step("s3").depends_on == ["s1"]
    assert [(n.check, n.action) for n in local.check_notes] == [
        ("implied_dependencies", "changed")]
