"""AppTest of the Lessons page, and of reflections and failure classes on the run page."""

from __future__ import annotations

from core.execution.scheduler import RunOptions
from core.learning.lessons import LessonBook
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.runner import Runner
from core.tools.toolsets import default_registry
from tests.support.app import keyed_block, open_app
from tests.support.shown import shown
from tests.support.waiting import DEFAULT_TIMEOUT_S

LESSONS = "pages/lessons.py"


def _failing_run(runner: Runner) -> str:
    """An offline run that fails on an unknown order: it reflects and leaves a lesson."""
    plan = Plan(goal="Look up order 99999", steps=[
        Step(id="s1", description="Look up order 99999", tool="query_order",
             args={"order_id": "99999"}),
        Step(id="s2", description="Add the price", tool="calculate",
             args={"expression": "1 + 1"}, depends_on=["s1"]),
    ])
    run_id = runner.start(plan.goal, plan, engine=Engine(default_registry()),
                          options=RunOptions(), settings_public={"offline": True})
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "failed"
    return run_id


def _lesson_text(at, lesson_id: int) -> str:
    return at.text_area(key=f"lesson_text_{lesson_id}").value


def test_without_lessons_the_page_says_where_they_come_from(runner):
    at = open_app(LESSONS)
    assert at.title[0].value == "Lessons"
    assert at.info[0].value.startswith("No lessons yet")


def test_a_lesson_is_listed_edited_disabled_and_deleted(runner):
    book = LessonBook(runner.store)
    lesson = book.add("Check the order status before refunding.", ["query_order"],
                      run_id="run-from-test")
    other = book.add("Ask for the budget first.")
    at = open_app(LESSONS)
    assert "2 lesson(s), 2 enabled." in [c.value for c in at.caption]
    card = keyed_block(at, f"lesson_{lesson.id}")
    assert card is not None
    assert f"#{lesson.id} · created " in card.caption[0].value
    assert "tools: query_order" in shown(card.caption[0].value)
    assert _lesson_text(at, lesson.id) == "Check the order status before refunding."
    assert at.toggle(key=f"lesson_enabled_{lesson.id}").value is True
    assert at.button(key=f"lesson_run_{lesson.id}").label == "Open run run-from-test"
    assert f"lesson_run_{other.id}" not in {b.key for b in at.button}

    at.text_area(key=f"lesson_text_{lesson.id}").input("Check the order first, always.").run()
    at.button(key=f"lesson_save_{lesson.id}").click().run()
    assert book.get(lesson.id).text == "Check the order first, always."
    assert at.success[0].value == f"Lesson #{lesson.id} saved."

    at.toggle(key=f"lesson_enabled_{lesson.id}").set_value(False).run()
    assert book.get(lesson.id).enabled is False
    assert "2 lesson(s), 1 enabled." in [c.value for c in at.caption]
    assert at.toggle(key=f"lesson_enabled_{lesson.id}").value is False

    at.button(key=f"lesson_delete_{lesson.id}").click().run()
    assert [x.id for x in book.list_lessons()] == [other.id]
    assert f"lesson_text_{lesson.id}" not in {w.key for w in at.text_area}
    assert at.success[0].value == f"Lesson #{lesson.id} deleted."


def test_a_lesson_from_a_failed_run_opens_that_run_with_its_reflection(runner):
    run_id = _failing_run(runner)
    lesson = LessonBook(runner.store).list_lessons()[0]
    assert lesson.run_id == run_id
    at = open_app(LESSONS)
    assert "query_order" in _lesson_text(at, lesson.id)
    at.button(key=f"lesson_run_{lesson.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Run" and at.query_params["run"] == run_id
    reflection = next(b for b in _blocks(at)
                      if "-reflection_" in str(getattr(b.proto, "id", "") or ""))
    text = " ".join(m.value for m in reflection.markdown)
    assert "Root cause: s1 (Look up order 99999) failed" in text
    assert "Lesson: confirm the id with the user" in text
    assert reflection.caption[0].value == "No retry advised."
    card = keyed_block(at, "step_card_s1")
    assert "Fatal failure" in " ".join(c.value for c in card.caption)


def test_the_lessons_page_in_chinese(runner):
    lesson = LessonBook(runner.store).add("先确认订单号。", ["query_order"], run_id="r1")
    at = open_app(LESSONS, language="zh")
    assert at.title[0].value == "经验教训"
    assert at.button(key=f"lesson_save_{lesson.id}").label == "保存"
    assert at.button(key=f"lesson_run_{lesson.id}").label == "打开运行 r1"
    assert at.toggle(key=f"lesson_enabled_{lesson.id}").label == "启用"
    assert "共 1 条经验，1 条已启用。" in [c.value for c in at.caption]


def _blocks(at) -> list:
    found, stack = [], [at.main]
    while stack:
        node = stack.pop()
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            found.append(node)
            stack.extend(children.values())
    return found
