"""AppTest of dashboard.py: the settings sidebar, offline mode, the API key, the language switch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.runs.runner import Runner
from tests.support import REPO
from tests.support.app import open_app
from tests.support.waiting import DEFAULT_TIMEOUT_S
from ui.i18n import TEXT

PAGES = ("pages/plan.py", "pages/run.py", "pages/history.py", "pages/lessons.py",
         "pages/tools.py")


def widget_labels(at: AppTest) -> dict[str, str]:
    """Labels of the keyed widgets on the screen, by key."""
    labels = {}
    for kind in ("button", "text_area", "text_input", "toggle", "radio", "selectbox",
                 "number_input", "checkbox", "download_button"):
        for widget in at.get(kind):
            if getattr(widget, "key", None) and widget.label:
                labels[widget.key] = widget.label
    return labels


def visible_text(at: AppTest) -> list[str]:
    """Titles, headers, captions, markdown, alerts, metric labels and widget labels."""
    texts: list[str] = list(widget_labels(at).values())
    for kind in ("title", "header", "subheader", "caption", "markdown", "info", "warning",
                 "error", "success"):
        texts += [str(element.value) for element in at.get(kind)]
    texts += [metric.label for metric in at.metric]
    texts += [expander.label for expander in at.expander]
    return texts


# ---- the translation table --------------------------------------------------------------


def test_every_label_exists_in_both_languages_with_the_same_placeholders():
    field = re.compile(r"\{(\w+)\}")
    for key, entry in TEXT.items():
        assert set(entry) == {"en", "zh"}, key
        assert entry["en"].strip() and entry["zh"].strip(), key
        assert set(field.findall(entry["en"])) == set(field.findall(entry["zh"])), key


def test_every_label_used_in_the_code_is_in_the_table():
    used: set[str] = set()
    for path in [REPO / "dashboard.py", *REPO.glob("pages/*.py"), *REPO.glob("ui/*.py")]:
        used |= set(re.findall(r"""\bt\(\s*["'](\w+)["']""", path.read_text("utf-8")))
    assert used, "no labels found"
    assert sorted(used - set(TEXT)) == []


# ---- sidebar ------------------------------------------------------------------------------


def test_without_a_key_offline_mode_is_on_and_the_sidebar_says_why(runner):
    at = open_app()
    assert at.toggle(key="offline_mode").value is True
    assert at.toggle(key="confirm_side_effects").value is True
    captions = [c.value for c in at.sidebar.caption]
    assert any("Planner: offline rules — no API key is configured" in c for c in captions)


def test_with_a_key_in_the_environment_the_llm_planner_is_used(runner, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-environment-key-123")
    monkeypatch.setenv("OPENAI_MODEL", "qwen-plus")
    at = open_app()
    assert at.toggle(key="offline_mode").value is False
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "Planner: qwen-plus at https://api.openai.com/v1" in captions
    assert "Using OPENAI_API_KEY from the environment." in captions


def test_switching_offline_mode_off_without_a_key_still_plans_offline(runner):
    at = open_app()
    at.toggle(key="offline_mode").set_value(False).run()
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "offline mode is off but there is no API key" in captions


def test_the_api_key_stays_in_the_session_only(runner, isolated_environment):
    secret = "sk-session-only-abcdef123456"
    at = open_app()
    at.text_input(key="api_key").input(secret).run()
    assert at.text_input(key="api_key").value == secret
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "Using the key typed here (this session only)." in captions
    assert at.toggle(key="offline_mode").value is True  # still offline until switched off
    at.session_state["plan"] = _tiny_plan()
    at.run()
    at.button(key="approve_run").click().run()
    assert not at.exception
    runner.wait(at.query_params["run"], DEFAULT_TIMEOUT_S)
    for path in Path(isolated_environment).rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_settings_survive_the_jump_to_the_run_page(runner):
    secret = "sk-session-only-abcdef123456"
    at = open_app(plan=_tiny_plan())
    at.radio(key="language").set_value("zh").run()
    at.text_input(key="api_key").input(secret).run()
    at.number_input(key="max_parallel").set_value(2).run()
    at.button(key="approve_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["run"]
    at.run()  # the run page, drawn after st.switch_page
    assert at.session_state["language"] == "zh"
    assert at.session_state["api_key"] == secret
    assert at.session_state["max_parallel"] == 2
    assert secret not in str(dict(at.query_params))


def _tiny_plan():
    from core.plan.model import Plan, Step

    return Plan(goal="What is 6 * 7?", steps=[
        Step(id="s1", description="Multiply", tool="calculate", args={"expression": "6 * 7"}),
    ])


# ---- language -----------------------------------------------------------------------------


def _page_with_content(page: str, runner: Runner) -> AppTest:
    """``page`` showing real content: a plan on the plan page, a finished run elsewhere."""
    from core.execution.scheduler import RunOptions
    from core.llm.engine import Engine
    from core.tools.toolsets import default_registry

    if page == "pages/plan.py":
        return open_app(page, plan=_tiny_plan())
    plan = _tiny_plan()
    run_id = runner.start(plan.goal, plan, engine=Engine(default_registry()),
                          options=RunOptions(), settings_public={"offline": True})
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    if page == "pages/lessons.py":
        from core.learning.lessons import LessonBook

        LessonBook(runner.store).add("Check the order before refunding.", ["query_order"],
                                     run_id=run_id)
    return open_app(page, query={"run": run_id})


@pytest.mark.parametrize("page", PAGES)
def test_switching_to_chinese_translates_every_label(runner, page):
    at = _page_with_content(page, runner)
    english = widget_labels(at)
    english_text = visible_text(at)
    at.radio(key="language").set_value("zh").run()
    assert not at.exception
    chinese = widget_labels(at)
    assert set(chinese) == set(english)
    same = {k for k in english if english[k] == chinese[k] and not k.startswith("scenario_")}
    assert same == set(), f"labels not translated: {sorted(same)}"
    table_english = {e["en"] for e in TEXT.values() if e["en"] != e["zh"] and len(e["en"]) > 3}
    chinese_text = visible_text(at)
    leftovers = [text for text in chinese_text if text in table_english]
    assert leftovers == []
    assert len(chinese_text) == len(english_text)
    assert at.title[0].value == TEXT[page.split("/")[1][:-3] + "_title"]["zh"]


def test_every_event_kind_has_a_label_in_both_languages():
    from typing import get_args

    from core.execution.events import EventKind
    from ui.i18n import TEXT

    for kind in get_args(EventKind):
        labels = TEXT[f"kind_{kind}"]
        assert labels["en"] and labels["zh"] and labels["en"] != labels["zh"]


def test_the_demo_pace_is_off_by_default_and_kept_across_pages(runner):
    at = open_app()
    assert at.number_input(key="demo_pace").value == 0
    at.number_input(key="demo_pace").set_value(1.5).run()
    at.switch_page("pages/history.py").run()
    at.switch_page("pages/plan.py").run()
    assert at.number_input(key="demo_pace").value == 1.5
    assert at.session_state["demo_pace"] == 1.5
