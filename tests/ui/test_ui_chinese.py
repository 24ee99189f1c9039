"""The customer-service scenario in the Chinese dashboard, read word by word.

With the UI in Chinese, the plan page, the run page (waiting for the refund's confirmation
and finished), their graphs and the Markdown report hold no English word other than tool
names, step ids, identifiers of the plan's data (argument and result fields, conditions
written as expressions) and the few words listed in ALLOWED with their reason. Every
element's text is read from its proto (labels, help, bodies, options, captions, table
headers and cells), so a new English label anywhere on these pages fails the test. Also:
a core error reaches a Chinese run page in Chinese.
"""

from __future__ import annotations

import json
import re

from google.protobuf.message import Message as Proto
from streamlit.testing.v1.element_tree import Block

from core.access.identity import os_actor
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.graph import plan_to_dot, side_effect_tool_names
from core.plan.model import Plan, Step
from core.runs.export import export_run
from core.runs.runner import Runner
from core.tools.toolsets import default_registry
from tests.support.app import keyed_block, open_app, wait_for
from tests.support.shown import graph_dots, shown
from tests.support.waiting import DEFAULT_TIMEOUT_S

WORD = re.compile(r"[A-Za-z]{2,}")
# Words that may stay in the Chinese pages, each with its reason (kept short on purpose).
ALLOWED = {
    "AI": "the research scenario's Chinese title (a gallery tooltip): Chinese writes AI",
    "APP": "the knowledge base's Chinese vacuum guide writes APP, as Chinese does",
    "Lite": "the product's name in the Chinese data: 比特 S10 Lite 扫地机",
    "Pro": "the product's name in the Chinese data: 比特 S10 Pro 扫地机",
    "JSON": "the args column is JSON text, and its header says so",
    "Markdown": "a finished run's export, named by its file format",
    "DOT": "a finished run's export, named by its file format",
    "SVG": "a finished run's export, named by its file format",
    "python -m core demo reset": "the command the reset button's help names, typed as is",
    "OPENAI_API_KEY": "the environment variable a reasoning step's error names, typed as is",
}
# a reference or an expression over results, as written in conditions and their examples
_CODE = re.compile(r"\b(?:s\d+|result)(?:\.\w+)+(?:\s*(?:==|!=|<=|>=|<|>)\s*(?:'[^']*'|\d+))?")
_ICON = re.compile(r":material/\w+:")
_TEXT_FIELDS = {"label", "help", "body", "placeholder", "options", "value", "text", "caption",
                "code_text"}
_DATA_ELEMENTS = {"json", "html"}  # tool arguments and results as returned; the page's CSS
_DATA_COLUMNS = {"condition", "详情"}  # conditions as written (code); raw event data


# ---- reading a page ------------------------------------------------------------------------


def _strings(proto: Proto) -> list[str]:
    """Every text field of a proto, nested messages and repeated fields included."""
    found: list[str] = []
    for field, value in proto.ListFields():
        values = list(value) if field.is_repeated else [value]
        for item in values:
            if isinstance(item, Proto):
                found += _strings(item)
            elif isinstance(item, str) and field.name in _TEXT_FIELDS:
                found.append(item)
    return found


def _table_text(element) -> list[str]:
    """A data frame's headers (as configured) and cells; JSON cells by their values."""
    config = json.loads(element.proto.columns or "{}")
    found = [str(spec.get(key) or "") for spec in config.values() if isinstance(spec, dict)
             for key in ("label", "help")]
    frame = element.value
    for column in frame.columns:
        spec = config.get(str(column)) or {}
        label = spec.get("label") or str(column)
        found.append(label)
        if str(column) in _DATA_COLUMNS or label in _DATA_COLUMNS:
            continue
        options = {str(o.get("value")): str(o.get("label")) for o in
                   (spec.get("type_config") or {}).get("options") or [] if isinstance(o, dict)}
        found += options.values()  # a choice column shows each value by its label
        for cell in frame[column].astype(str):
            found += _json_values(options.get(cell, cell))
    return found


def _json_values(text: str) -> list[str]:
    """The values of a JSON object written in a cell (its keys are argument names), else it."""
    try:
        value = json.loads(text)
    except ValueError:
        return [text]
    return [str(v) for v in value.values()] if isinstance(value, dict) else [text]


def page_text(node) -> list[str]:
    """Every text an element of ``node`` (a block, or the app's main area) shows."""
    found: list[str] = []
    if isinstance(node, Block):
        if node.proto is not None:
            found += _strings(node.proto)
        for child in node.children.values():
            found += page_text(child)
        return found
    if node.type in _DATA_ELEMENTS or getattr(node, "proto", None) is None:
        return found
    if node.type == "dataframe":
        return _table_text(node)
    if node.type == "component_instance":  # the plan graph: its toolbar's words (DOT apart)
        return [str(v) for v in json.loads(node.proto.json_args).get("labels", {}).values()]
    return _strings(node.proto)


def dot_labels(dot: str) -> list[str]:
    """The labels a DOT draws (node and edge labels, \\n as line breaks)."""
    return [label.replace("\\n", "\n") for label in re.findall(r'label="((?:[^"\\]|\\.)*)"', dot)]


def english_words(texts: list[str], plan: Plan, results: dict[str, object]
                  ) -> dict[str, str]:
    """English words left in ``texts`` (with a text holding each) once the allowed words,
    tool names, step ids, data field names, conditions and icon codes are taken out."""
    registry = default_registry()
    # the person who acted (here the OS user) is a name, shown as written
    identifiers = set(registry.names()) | {s.id for s in plan.steps} | {os_actor().name}
    for step in plan.steps:
        identifiers |= set(step.args or {})
        if step.tool in registry:
            identifiers |= set(registry.get(step.tool).parameters.get("properties") or {})
    for result in results.values():
        identifiers |= set(result) if isinstance(result, dict) else set()
    left: dict[str, str] = {}
    for shown_text in texts:
        text = _ICON.sub(" ", shown_text.replace("\\_", "_"))
        # the longest first: "AI" is allowed alone, not inside OPENAI_API_KEY
        for written in sorted([*ALLOWED, *(s.condition for s in plan.steps if s.condition)],
                              key=len, reverse=True):
            text = text.replace(written, " ")
        # a token may start with a digit: a run id such as 143234712cbb is one token
        for token in re.findall(r"[A-Za-z0-9_][\w.]*", _CODE.sub(" ", text)):
            if re.search(r"\d", token):  # an id such as RF20260624001 or SF1234567890
                continue
            if token not in identifiers and token.split(".")[-1] not in identifiers:
                left.update(dict.fromkeys(WORD.findall(token), shown_text[:160]))
    return left


# ---- the customer-service scenario in Chinese ------------------------------------------------


def _run_to_the_end(at, runner: Runner) -> tuple[list[str], str]:
    """Approve the plan, read the run page while it asks to confirm the refund, confirm
    it, and return what the page showed while waiting and the run's id."""
    at.button(key="approve_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.query_params["run"]
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True).status == (
        "waiting_confirmation")
    at = wait_for(at, lambda a: any(b.key == "confirm_step_s3" for b in a.button))
    waiting = page_text(at.main)
    at.session_state["run_tabs"] = "依赖关系图"  # the graph is drawn while its tab is open
    at.run()
    waiting += page_text(at.main) + [t for d in graph_dots(at) for t in dot_labels(d)]
    at.session_state["run_tabs"] = "步骤"
    at.button(key="confirm_step_s3").click().run()
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    return waiting, run_id


def test_the_customer_service_scenario_holds_no_english_word_in_chinese(runner):
    at = open_app(language="zh")
    at.button(key="scenario_shop-refund").click().run()
    at.button(key="generate_plan").click().run()
    assert not at.exception, [e.value for e in at.exception]
    plan: Plan = at.session_state["plan"]
    assert [s.tool for s in plan.steps] == [
        "search_knowledge", "query_order", "apply_refund", None]
    plan_page = page_text(at.main)
    plan_graphs = graph_dots(at)
    assert plan_graphs, "the plan page draws no graph"
    assert "◇ s2.status == 'delivered'" in plan_graphs[0]

    waiting, run_id = _run_to_the_end(at, runner)
    at = wait_for(at, lambda a: any(m.value == "**状态:** 已完成" for m in a.markdown))
    run_page = page_text(at.main)
    at.session_state["run_tabs"] = "依赖关系图"
    at.run()
    run_graphs = graph_dots(at)
    assert run_graphs, "the run page draws no graph"
    record = runner.store.get_run(run_id)
    report = export_run(runner.store, run_id, "md", language="zh")
    report_dot = plan_to_dot(record.plan, side_effect_tools=side_effect_tool_names(
        default_registry()))

    results = {s.id: s.result for s in record.plan.steps}
    found = {
        "plan page": english_words(plan_page, plan, results),
        "plan graph": english_words([t for d in plan_graphs for t in dot_labels(d)], plan,
                                    results),
        "run page (waiting)": english_words(waiting, plan, results),
        "run page": english_words(run_page, plan, results),
        "run graph": english_words([t for d in run_graphs for t in dot_labels(d)], plan,
                                   results),
        "report": english_words(_report_text(report), plan, results),
        "report graph": english_words(dot_labels(report_dot), plan, results),
    }
    left = {where: words for where, words in found.items() if words}
    assert not left, json.dumps(left, ensure_ascii=False, indent=1)
    assert "以下是本次处理结果" in "\n".join(run_page)  # the answer is on the page, in Chinese


def _report_text(report: str) -> list[str]:
    """The report without its fenced results (tool output as returned) and the result
    column of its tables (a preview of the same output)."""
    lines, fenced = [], False
    for line in report.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line)[1:-1]
            line = "|".join(cells[:-1])  # the last column holds each step's result
        lines.append(line)
    return lines


# ---- a run of an English request, read in Chinese ------------------------------------------


# values shown as written: in a code span (a diff's old and new text), or quoted (an
# argument's value in a graph node)
_WRITTEN_AS_IS = re.compile(r"`[^`]*`|\"[^\"]*\"")
_COLOUR = re.compile(r":[a-z]+\[")  # Streamlit's colour directive, ":orange[…]"


def _labels(texts: list[str], record) -> list[str]:
    """``texts`` without what the run holds as written in its request's language: the
    request, the plan's step descriptions, success criteria and phase titles and goals
    (a graph node wraps them over lines), and values shown as written."""
    plan = record.plan
    written = [record.request, *(s.description for s in plan.steps),
               *(s.success_criteria for s in plan.steps if s.success_criteria),
               *(p.title for p in plan.phases), *(p.goal for p in plan.phases if p.goal)]
    labels = []
    for text in texts:
        text = " ".join(_COLOUR.sub(" ", _WRITTEN_AS_IS.sub(" ", shown(text))).split())
        for words in sorted(written, key=len, reverse=True):
            text = text.replace(" ".join(words.split()), " ")
        labels.append(text)
    return labels


def _chart_text(at) -> list[str]:
    """The timeline chart's words: its titles, and the rows, parts and marks of its data."""
    found = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        found += re.findall(r'"title": "([^"]*)"', json.dumps(spec, ensure_ascii=False))
        for data in spec.get("datasets", {}).values():
            found += [str(row.get(key)) for row in data for key in ("kind", "label")
                      if row.get(key) is not None]
        for layer in spec.get("layer", []):
            for row in (layer.get("data") or {}).get("values", []):
                found += [str(row.get(key)) for key in ("kind", "label") if row.get(key)]
    return found


def _tabs_text(at) -> list[str]:
    """Every label of the run page's three tabs: the cards, the graph, the timeline."""
    texts = page_text(at.main)
    at.session_state["run_tabs"] = "依赖关系图"
    at.run()
    texts += [t for d in graph_dots(at) for t in dot_labels(d)]
    at.session_state["run_tabs"] = "时间线"
    at.run()
    texts += page_text(at.main) + _chart_text(at)
    at.session_state["run_tabs"] = "步骤"
    at.run()
    return texts


def test_an_english_run_edited_before_approval_reads_wholly_in_chinese(runner):
    """Every label of a finished demo run of an English request, read in Chinese: the
    success checks, why a version exists, statuses and notes are worded in Chinese; only
    what the run holds as written (its request, the planner's steps, the answer, results)
    stays English."""
    at = open_app(language="en")
    at.button(key="scenario_shop-refund").click().run()
    at.button(key="generate_plan").click().run()
    edited = at.session_state["plan"].model_copy(deep=True)
    edited.steps[0].description += " (checked)"
    at.session_state["plan"] = edited  # a person's edit: the run gets version 2
    at.run()
    at.button(key="approve_run").click().run()
    run_id = at.query_params["run"]
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True).status == (
        "waiting_confirmation")
    at = wait_for(at, lambda a: any(b.key.startswith("confirm_step_") for b in a.button))
    next(b for b in at.button if b.key.startswith("confirm_step_")).click().run()
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at.session_state["language"] = "zh"
    at = wait_for(at, lambda a: any(m.value == "**状态:** 已完成" for m in a.markdown))
    answer = page_text(keyed_block(at, "run_answer"))
    texts = [text for text in _tabs_text(at) if text not in answer]
    record = runner.store.get_run(run_id)
    shown_texts = "\n".join(texts)
    assert "原因：审批前经人工编辑" in shown_texts  # the version's reason
    assert "成功标准已满足：结果字段 status 有值" in shown_texts  # a success check
    assert "距开始的秒数" in shown_texts and "重新规划为 v2" in shown_texts  # the timeline
    results = {s.id: s.result for s in record.plan.steps}
    left = english_words(_labels(texts, record), record.plan, results)
    assert not left, json.dumps(left, ensure_ascii=False, indent=1)


def test_a_chinese_request_that_needs_an_llm_reads_wholly_in_chinese_offline(runner):
    """Every label of a finished offline run of a Chinese request with a part no tool can
    do (a reasoning step, which fails without a model), its answer and the lesson drawn
    from the failure included, is Chinese."""
    at = open_app(language="zh", plan_mode="plan")
    at.text_area(key="request").input("我家老人适合什么扫地机？预算 2000 以内").run()
    at.button(key="generate_plan").click().run()
    plan = at.session_state["plan"]
    assert any(s.tool is None for s in plan.steps if s is not plan.synthesis_step())
    at.button(key="approve_run").click().run()
    run_id = at.query_params["run"]
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "failed"
    at = wait_for(at, lambda a: any(m.value == "**状态:** 失败" for m in a.markdown))
    texts = _tabs_text(at)
    assert "比特 S10 Lite" in "\n".join(page_text(keyed_block(at, "run_answer")))
    record = runner.store.get_run(run_id)
    left = english_words(_labels(texts, record), record.plan,
                         {s.id: s.result for s in record.plan.steps})
    assert not left, json.dumps(left, ensure_ascii=False, indent=1)


# ---- a core error on the Chinese run page ----------------------------------------------------


def test_a_refused_refund_fails_its_step_in_chinese_on_the_run_page(runner):
    plan = Plan(goal="帮我把订单 70412 退掉", steps=[
        Step(id="s1", description="为订单 70412 申请退款", tool="apply_refund",
             args={"order_id": "70412", "reason": "不想要了"}),
    ])
    run_id = runner.start(plan.goal, plan, engine=Engine(default_registry()),
                          options=RunOptions(confirm_side_effects=False),
                          settings_public={"offline": True})
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "failed"
    at = open_app("pages/run.py", query={"run": run_id}, language="zh")
    errors = [e.value for e in at.error]
    refused = "订单 70412 的状态是“运输中”，尚未签收；签收后才能申请退款"
    assert any(refused in e for e in errors), errors
    assert not any("not delivered" in e for e in errors)
    report = export_run(runner.store, run_id, "md", language="zh")
    assert "**错误:** 订单 70412 的状态是“运输中”" in report
