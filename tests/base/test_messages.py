"""Message codes: the catalogue in both languages, errors that carry one, and their readers.

An error raised with a code reads in English through ``str()`` (logs, records, the English
command line) and in Chinese through ``render``; a failed step keeps its code in the
record so that the run page and the report word it in the reader's language.
"""

from __future__ import annotations

import re
import string

import pytest

from core.base.messages import TEXTS, Both, Message, msg, render
from core.cli.main import main as cli_main
from core.errors import LLM_FAILURE, LLMModelNotFoundError, PlanValidationError, ToolExecutionError
from core.execution.executor import apply_outcome, execute_step
from core.lifecycle import RUN_STATUSES
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.view import skip_reason
from core.tools.research import make_web_search
from core.tools.tool_texts import BUILTIN_TEXTS_ZH, tool_description, tool_parameters
from core.tools.toolsets import default_registry
from demo.messages import TEXTS as DEMO_TEXTS
from demo.messages import said
from demo.texts import TEXTS_ZH as DEMO_TEXTS_ZH
from tests.support import REPO

CJK = re.compile(r"[\u4e00-\u9fff]")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


# ---- the catalogue ----------------------------------------------------------------------


@pytest.mark.parametrize("catalogue", [TEXTS, DEMO_TEXTS], ids=["engine", "demo pack"])
def test_every_code_has_both_wordings_with_the_same_placeholders(catalogue):
    for code, (english, chinese) in catalogue.items():
        assert english.strip() and chinese.strip(), code
        assert _fields(english) == _fields(chinese), code
        words = re.sub(r"\{\w+\}", "", chinese)  # what is left besides the placeholders
        if re.search(r"[A-Za-z]", words):
            assert CJK.search(words), f"{code}: the Chinese wording holds no Chinese"


def test_every_code_raised_in_core_is_in_the_catalogue():
    used: set[str] = set()
    for path in (REPO / "core").rglob("*.py"):
        used |= set(re.findall(r"""\bmsg\(\s*"([\w.]+)\"""", path.read_text("utf-8")))
    assert len(used) > 50
    assert sorted(used - set(TEXTS)) == []


def test_statuses_and_controls_worded_by_prefix_all_exist():
    steps = ("pending", "running", "completed", "failed", "skipped")
    wanted = {f"run_status.{s}" for s in RUN_STATUSES} | {f"step_status.{s}" for s in steps}
    wanted |= {f"control.{v}" for v in ("pause", "confirm", "reject", "approve_version",
                                        "reject_version")}
    wanted |= {f"skip.{k}" for k in ("condition", "rejected", "cancelled", "blocked", "other")}
    assert sorted(wanted - set(TEXTS)) == []


def test_a_failed_llm_call_keeps_the_prefix_the_failure_checks_look_for():
    assert str(msg("step.llm_failed", error="boom")) == f"{LLM_FAILURE}: boom"


# ---- rendering -----------------------------------------------------------------------------


def test_nested_messages_both_values_and_lists_are_worded_in_the_language():
    problems = [msg("tool.arg_missing", field="order_id"), "x: bad"]
    message = msg("tool.args_invalid", tool="query_order", problems=problems)
    assert str(message) == ("query_order: order_id: Field required; x: bad (check the tool's "
                            "parameter schema)")
    assert render(message, "zh") == (
        "query_order：order_id：缺少这个必填参数；x: bad（请对照工具的参数定义）")
    status = said("shop.refund_not_delivered", order_id="1",
                  status=Both(en="shipped", zh="已发货"))
    assert "is shipped," in render(status, "en") and "“已发货”" in render(status, "zh")


def test_plain_text_and_unknown_codes_are_shown_as_they_are():
    assert render("as written", "zh") == "as written"
    assert render(None, "zh") == ""
    assert render(Message(code="from.a.newer.version", params={"n": 3}), "zh") == (
        "from.a.newer.version 3")
    assert render(ValueError("plain"), "zh") == "plain"
    older = Message(code="run.not_found", params={"name": "r1"})  # its wording wants run_id
    assert render(older, "zh") == "run.not_found r1"


def test_a_message_survives_the_record_as_json():
    message = msg("ref.no_field", reference="{{s1.x}}", walked="s1", field="'x'",
                  known=msg("ref.known_fields", fields="a, b"))
    again = Message.model_validate_json(message.model_dump_json())
    assert render(again, "zh") == render(message, "zh")
    assert "（它的字段有：a, b）" in render(again, "zh")


# ---- the tools' own descriptions -------------------------------------------------------------


def test_every_built_in_and_demo_tool_and_parameter_is_described_in_chinese():
    tools = [*default_registry(), make_web_search("http://127.0.0.1:9")]
    texts = {**BUILTIN_TEXTS_ZH, **DEMO_TEXTS_ZH}
    assert sorted(t.name for t in tools) == sorted(texts)
    for tool in tools:
        assert CJK.search(tool_description(tool, "zh")), tool.name
        assert tool_description(tool, "en") == tool.description
        properties = tool_parameters(tool, "zh").get("properties") or {}
        assert set(properties) == set(texts[tool.name][1]), tool.name
        assert all(CJK.search(p["description"]) for p in properties.values()), tool.name
        assert tool_parameters(tool, "en") == tool.parameters  # the models' schema, untouched


# ---- errors that carry a code --------------------------------------------------------------


def test_a_refused_refund_reads_in_english_and_renders_in_chinese():
    with pytest.raises(ToolExecutionError) as caught:
        default_registry().call("apply_refund", {"order_id": "70412"})
    exc = caught.value
    assert str(exc).startswith("order 70412 is in transit (运输中), not delivered")
    assert render(exc, "zh") == "订单 70412 的状态是“运输中”，尚未签收；签收后才能申请退款"


def test_plan_problems_render_in_chinese_around_the_problems_as_written():
    exc = PlanValidationError(["s2 依赖不存在的步骤 s9"])
    assert str(exc) == "The plan has problems: s2 依赖不存在的步骤 s9. Fix them and try again."
    assert render(exc, "zh") == "计划有问题：s2 依赖不存在的步骤 s9。请修改后再试。"


def test_an_llm_error_renders_in_chinese(fake_openai):
    model = OpenAIChatModel(fake_openai.settings(planner_model="gpt-9-ultra"))
    with pytest.raises(LLMModelNotFoundError) as caught:
        model.chat([{"role": "user", "content": "hi"}], role="planner")
    model.close()
    worded = render(caught.value, "zh")
    assert worded.startswith(f"{fake_openai.base_url} 没有提供模型 'gpt-9-ultra'")
    assert "PLANBOARD_PLANNER_MODEL" in worded


def test_a_failed_step_keeps_its_code_for_the_run_page_and_the_report():
    plan = Plan(goal="退掉订单 70412", steps=[
        Step(id="s1", description="申请退款", tool="apply_refund", args={"order_id": "70412"}),
    ])
    step = plan.steps[0]
    outcome = execute_step(plan, step, Engine(default_registry()))
    step.advance("running")
    apply_outcome(step, outcome)
    assert step.status == "failed" and step.error.startswith("order 70412 is in transit")
    stored = Step.model_validate_json(step.model_dump_json())
    assert render(stored.error_message, "zh").startswith("订单 70412 的状态是“运输中”")


def test_an_offline_reasoning_step_fails_with_a_chinese_reason():
    plan = Plan(goal="想一想", steps=[Step(id="s1", description="想一想")])
    plan.steps.append(Step(id="s2", description="总结", depends_on=["s1"]))
    outcome = execute_step(plan, plan.steps[0], Engine(default_registry()))
    assert outcome.status == "failed"
    assert outcome.error == str(outcome.error_message)
    assert render(outcome.error_message, "zh").startswith("s1 是推理步骤，需要大模型")


def test_a_step_skipped_for_a_prose_condition_says_why_in_chinese():
    plan = Plan(goal="如果订单已签收就退款", steps=[
        Step(id="s1", description="查订单", tool="query_order", args={"order_id": "88231"}),
        Step(id="s2", description="退款", tool="apply_refund", args={"order_id": "88231"},
             depends_on=["s1"], condition="订单已经签收"),
    ])
    step = plan.steps[1]
    outcome = execute_step(plan, step, Engine(default_registry()))
    step.advance("running")
    apply_outcome(step, outcome)
    reason = skip_reason(step)
    assert step.status == "skipped" and reason.kind == "other"
    assert reason.detail.startswith("the condition '订单已经签收' is written in prose")
    assert render(reason.message, "zh").startswith("条件 '订单已经签收' 是用文字写的")


def test_the_command_line_says_errors_in_its_language(monkeypatch, capsys):
    monkeypatch.setenv("PLANBOARD_LANG", "zh")
    assert cli_main(["show", "nope"]) == 1
    assert capsys.readouterr().err.strip() == (
        "错误：没有运行 'nope'；查看所有运行：python -m core runs")
    monkeypatch.setenv("PLANBOARD_LANG", "en")
    assert cli_main(["show", "nope"]) == 1
    assert capsys.readouterr().err.strip() == (
        "error: no run 'nope'; list the runs with: python -m core runs")
