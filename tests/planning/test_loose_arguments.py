"""Arguments a tool does not take, and optional null ones, are left out of a small model's
plan; a required one left empty is sent back with a tool that needs none."""

from __future__ import annotations

import json

from bench.catalogues import catalogue_registry
from core.llm.engine import Engine
from core.llm.providers import PROFILES
from core.planning.planner import plan_request
from core.runs.session import request_language
from tests.support.fakes import ScriptedChatModel

REQUEST = "What was the last commit's message in /tmp/repo, and what time is it in Tokyo?"
PLAN = {"goal": REQUEST, "steps": [
    {"id": "s1", "description": "Read the last commit", "tool": "git__git_log",
     "args": {"repo_path": "/tmp/repo", "limit": 1, "reverse": True, "start_timestamp": None},
     "depends_on": []},
    {"id": "s2", "description": "Get the current time in Tokyo", "tool": "time__get_current_time",
     "args": {"timezone": "Asia/Tokyo"}, "depends_on": []},
    {"id": "s3", "description": "Answer", "tool": None, "depends_on": ["s1", "s2"]}]}
CONVERTER = {"id": "s2", "description": "Get the current time in Tokyo",
             "tool": "time__convert_time", "depends_on": [],
             "args": {"source_timezone": "Asia/Tokyo", "time": None,
                      "target_timezone": "Asia/Tokyo"}}


class Hosted(ScriptedChatModel):
    profile = PROFILES["openai"]


def test_a_small_models_loose_arguments_are_left_out_with_a_note():
    model = ScriptedChatModel(replies=[json.dumps(PLAN)])
    result = plan_request(REQUEST, Engine(registry=catalogue_registry(100), model=model),
                          language=request_language(REQUEST))
    steps = {step.id: step for step in result.plan.steps}
    assert result.attempts == 1 and not result.fallback  # no corrective round for them
    assert steps["s1"].args == {"repo_path": "/tmp/repo"}
    assert any(w.startswith("s1 gave git__git_log arguments it does not take") and
               '"limit": 1' in w and '"start_timestamp": null' in w
               for w in result.plan.warnings)


def test_a_required_argument_left_empty_is_sent_back_naming_a_tool_that_needs_none():
    converting = {**PLAN, "steps": [PLAN["steps"][0], CONVERTER, PLAN["steps"][2]]}
    model = ScriptedChatModel(replies=[json.dumps(converting), json.dumps(PLAN)])
    result = plan_request(REQUEST, Engine(registry=catalogue_registry(100), model=model),
                          language=request_language(REQUEST))
    correction = model.requests[1]["messages"][-1]["content"]
    assert "None is not of type 'string'" in correction  # not made up later: sent back
    assert ('s2 leaves time__convert_time without time, which it needs. If the request does '
            'not give the value, time__convert_time is the wrong tool for "Get the current '
            'time in Tokyo": use time__get_current_time, which does not need it. Give it its '
            'timezone from the request.') in correction  # its default would stand in for it
    assert result.attempts == 2 and result.plan.steps[1].tool == "time__get_current_time"


def test_a_hosted_model_is_asked_to_fix_them_instead():
    fixed = {**PLAN, "steps": [{**PLAN["steps"][0], "args": {"repo_path": "/tmp/repo",
                                                             "max_count": 1}},
                               {**PLAN["steps"][1], "tool": "time__get_current_time",
                                "args": {"timezone": "Asia/Tokyo"}}, PLAN["steps"][2]]}
    model = Hosted(replies=[json.dumps(PLAN), json.dumps(fixed)])
    result = plan_request(REQUEST, Engine(registry=catalogue_registry(100), model=model),
                          language=request_language(REQUEST))
    assert result.attempts == 2
    assert "unknown argument 'limit'" in model.requests[1]["messages"][-1]["content"]
