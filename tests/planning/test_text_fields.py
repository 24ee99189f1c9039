"""A small model's ``{{sN.field}}`` of a step whose result is text reads the whole text;
a hosted model is asked to fix it instead."""

from __future__ import annotations

import json

from bench.catalogues import catalogue_registry
from core.llm.engine import Engine
from core.llm.providers import PROFILES
from core.plan.model import Plan, Step
from core.planning.planner import plan_request, replan_request
from tests.support.fakes import ScriptedChatModel

REQUEST = "What time is it in Tokyo when it is 09:30 in London?"
PLAN = {"goal": REQUEST, "steps": [
    {"id": "s1", "description": "Write the London time as HH:MM", "tool": None,
     "depends_on": []},
    {"id": "s2", "description": "Convert it to Tokyo time", "tool": "time__convert_time",
     "args": {"source_timezone": "Europe/London", "time": "{{s1.result}}",
              "target_timezone": "Asia/Tokyo"}, "depends_on": ["s1"]},
    {"id": "s3", "description": "Answer", "tool": None, "depends_on": ["s2"]}]}


class Hosted(ScriptedChatModel):
    profile = PROFILES["openai"]


def _plan(model: ScriptedChatModel, language: str = "en"):
    return plan_request(REQUEST, Engine(registry=catalogue_registry(100), model=model),
                        language=language)


def test_a_field_of_a_reasoning_steps_text_is_read_as_the_whole_text():
    model = ScriptedChatModel(replies=[json.dumps(PLAN)])
    result = _plan(model)
    step = result.plan.step("s2")
    assert result.attempts == 1 and not result.fallback  # no corrective round for it
    assert step.args["time"] == "{{s1}}"
    assert step.args["source_timezone"] == "Europe/London"  # the rest is left as it was
    assert result.plan.validate(catalogue_registry(100)) == []
    assert ("s2 read {{s1.result}}, a field of a text; it reads the whole text, {{s1}}."
            in result.plan.warnings)


def test_the_note_is_in_the_requests_language():
    result = _plan(ScriptedChatModel(replies=[json.dumps(PLAN)]), language="zh")
    assert "s2 读取的 {{s1.result}} 是文本的字段；改为读取全文 {{s1}}。" in result.plan.warnings


def test_a_field_of_a_tools_data_is_left_alone():
    reads_data = {**PLAN, "steps": [
        {"id": "s1", "description": "The time in London", "tool": "time__get_current_time",
         "args": {"timezone": "Europe/London"}, "depends_on": []},
        {**PLAN["steps"][1], "args": {**PLAN["steps"][1]["args"], "time": "{{s1.datetime}}"}},
        PLAN["steps"][2]]}
    result = _plan(ScriptedChatModel(replies=[json.dumps(reads_data)]))
    assert result.plan.step("s2").args["time"] == "{{s1.datetime}}"
    assert not [w for w in result.plan.warnings if "a field of a text" in w]


def test_a_hosted_model_is_asked_to_fix_it_instead():
    fixed = {**PLAN, "steps": [PLAN["steps"][0],
                               {**PLAN["steps"][1], "args": {**PLAN["steps"][1]["args"],
                                                             "time": "{{s1}}"}},
                               PLAN["steps"][2]]}
    model = Hosted(replies=[json.dumps(PLAN), json.dumps(fixed)])
    result = _plan(model)
    assert result.attempts == 2
    assert "use {{s1}} for the whole text" in model.requests[1]["messages"][-1]["content"]


def test_in_a_replan_a_field_of_a_tool_reply_that_came_back_as_text_reads_the_whole_text():
    # the local model planned {{s2.result}} of a git log (plain text) as a time to convert,
    # and planned it again in every replan
    request = "What was the last commit's message in /srv/repo, and what time is it in Tokyo?"
    before = Plan(goal=request, version=1, steps=[
        Step(id="s1", description="The time in Tokyo", tool="time__get_current_time",
             args={"timezone": "Asia/Tokyo"}, status="completed",
             result={"datetime": "2026-12-03T07:17:05+09:00"}),
        Step(id="s2", description="The last commit", tool="git__git_log",
             args={"repo_path": "/srv/repo", "max_count": 1}, status="completed",
             result="Commit history:\nCommit: d9981ac\nMessage: Teach the parcel tracker"),
        Step(id="s3", description="Convert the time", tool="time__convert_time",
             args={"source_timezone": "Asia/Tokyo", "time": "{{s2.result}}",
                   "target_timezone": "UTC"}, depends_on=["s2"], status="failed",
             error="s3 argument 'time': {{s2.result}} cannot be resolved"),
        Step(id="s4", description="Answer", tool=None, depends_on=["s1", "s2", "s3"])])
    again = {"steps": [
        {**PLAN["steps"][1], "id": "s5", "depends_on": ["s2"],
         "args": {"source_timezone": "Asia/Tokyo", "time": "{{s2.result}}",
                  "target_timezone": "UTC"}},
        {"id": "s6", "description": "Answer", "tool": None, "depends_on": ["s1", "s2", "s5"]}]}
    result = replan_request(before, "s3 failed", Engine(registry=catalogue_registry(100),
                            model=ScriptedChatModel(replies=[json.dumps(again)])))
    assert result.attempts == 1 and result.plan.step("s5").args["time"] == "{{s2}}"
    assert "s5 read {{s2.result}}, a field of a text; it reads the whole text, {{s2}}." in (
        result.plan.warnings)
