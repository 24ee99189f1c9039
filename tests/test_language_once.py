"""A request's language is decided once, where it enters, and carried from there.

The places that decide it are listed here by module; any other module of core/, ui/ or
pages/ that calls ``detect_language`` guesses again, and fails this test.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from core.base.language import written_in
from core.cli.main import main
from core.store.run_store import RunStore
from tests.support import REPO
from tests.support.shown import step_heads

FACES_AND_CORE = ("core", "ui", "pages")

# module -> why it decides the language
DECIDERS = {
    "core/runs/session.py": "a request enters (route, questions, draft)",
    "core/planning/followup.py": "a follow-up enters",
    "core/plan/model.py": "a plan given no language (a bare goal, a plan file or record "
                          "written before plans held one) has it decided once",
}


def _python_files() -> list[Path]:
    return sorted(path for folder in FACES_AND_CORE for path in (REPO / folder).rglob("*.py"))


def _detections(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "detect_language"]


def test_only_the_entry_points_detect_the_language():
    found = {str(path.relative_to(REPO)): lines for path in _python_files()
             if (lines := _detections(path))}
    guessing = {module: lines for module, lines in found.items() if module not in DECIDERS}
    assert not guessing, (
        "these modules guess the request's language again: take it from the plan, the run "
        f"or the request instead: {guessing}")
    assert sum(len(lines) for lines in found.values()) <= 4, found
    assert set(found) == set(DECIDERS), "a listed entry point no longer decides: drop it"


def test_pick_is_gone_from_the_engine_and_the_faces():
    found = [f"{path.relative_to(REPO)}:{number}" for path in _python_files()
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"(?<![\w.])pick\(", line)]
    assert not found, f"word these with message codes (core.base.messages.msg): {found}"


# module -> the one wording function that chooses between a pair by language
WORDERS = {
    "core/base/messages.py": "render and joined (core's codes); Both.word (data in both)",
    "core/base/language.py": "written_in: whether a text reads in the language",
    "core/cli/text.py": "say: the command line's own catalogue",
}


def test_only_the_wording_functions_branch_on_the_language():
    found = [f"{path.relative_to(REPO)}:{number}" for path in _python_files()
             if str(path.relative_to(REPO)) not in WORDERS
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"""==\s*["']zh["']|["']zh["']\s*==""", line)]
    assert not found, f"word these with message codes or Both, not inline branches: {found}"


@pytest.mark.parametrize(("request_text", "language", "answer_opens", "export_says", "other"), [
    ("查一下订单 88231 到了没", "zh", "以下是本次处理结果", "## 计划", "Here is what I found"),
    ("check whether order 88231 has arrived", "en", "Here is what I found", "## Plan",
     "以下是本次处理结果"),
])
def test_a_request_stays_in_its_language_from_plan_to_export(
        capsys, monkeypatch, request_text, language, answer_opens, export_says, other):
    monkeypatch.setenv("PLANBOARD_LANG", "en")  # the command line's own words: not the request's
    assert main(["plan", "--offline", "--json", request_text]) == 0
    drafted = json.loads(capsys.readouterr().out)
    assert drafted["language"] == language
    assert all(written_in(step["description"], language) for step in drafted["steps"])
    assert main(["run", "--offline", "--yes", request_text]) == 0
    shown = capsys.readouterr().out
    assert answer_opens in shown and other not in shown
    assert "steps, critical path" in shown  # the CLI's own words follow PLANBOARD_LANG
    [listed] = RunStore().list_runs()  # a listing holds no plan: read the run itself
    run = RunStore().get_run(listed.run_id)
    assert run.plan is not None and run.plan.language == language
    assert main(["export", run.run_id, "--format", "md"]) == 0
    report = capsys.readouterr().out
    assert export_says in report and answer_opens in report and other not in report


@pytest.mark.parametrize(("request_text", "language", "answer_opens", "other"), [
    ("查一下订单 88231 到了没", "zh", "以下是本次处理结果", "Here is what I found"),
    ("check whether order 88231 has arrived", "en", "Here is what I found", "以下是本次处理结果"),
])
def test_a_request_keeps_its_language_on_the_run_page(app_runner, request_text, language,
                                                      answer_opens, other):
    from tests.support.app import open_app, wait_for
    from tests.support.waiting import DEFAULT_TIMEOUT_S

    at = open_app(language="en")  # the dashboard's own words: English either way
    at.text_area(key="request").input(request_text).run()
    at.button(key="generate_plan").click().run()
    if "run" not in at.query_params:  # a plan to approve (a direct answer starts at once)
        at.button(key="approve_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.query_params["run"]
    assert app_runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda shown: any(answer_opens in m.value for m in shown.markdown),
                  what="the answer in the request's language")
    shown = " ".join([m.value for m in at.markdown]  # as Markdown escapes it
                     + list(step_heads(at).values())).replace("\\_", "_")
    assert other not in shown
    plan = app_runner.store.get_run(run_id).plan
    assert plan.language == language
    assert all(step.description in shown for step in plan.steps)
    assert all(written_in(step.description, language) for step in plan.steps)
