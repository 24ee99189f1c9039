"""Plan checks have one shape and one list; the checks for weak models follow the provider."""

from __future__ import annotations

import importlib
import json
import pkgutil

import pytest

import core.planning.checks as checks_package
from core.base.message_texts import TEXTS
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.llm.providers import PROFILES
from core.llm.settings import LLMSettings
from core.plan.model import Plan
from core.planning.checks import CHECKS, Check, all_checks, check_context, run_checks
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
