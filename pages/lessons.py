"""Lessons page: what earlier runs learned — edit, switch on or off, delete, open the source run."""

from __future__ import annotations

import streamlit as st

from core.errors import PlanBoardError
from core.learning.lessons import Lesson
from ui import state
from ui.frame import page_header
from ui.i18n import t
from ui.messages import error_text
from ui.safe_text import literal


def _notice(message: str, error: bool = False) -> None:
    st.session_state["lessons_notice"] = (message, error)


def _save(lesson_id: int) -> None:
    text = str(st.session_state.get(f"lesson_text_{lesson_id}") or "")
    try:
        state.lesson_book().update(lesson_id, text=text)
    except (PlanBoardError, ValueError) as exc:
        _notice(error_text(exc), error=True)
        return
    _notice(t("lesson_saved", id=lesson_id))


def _toggle(lesson_id: int) -> None:
    enabled = bool(st.session_state.get(f"lesson_enabled_{lesson_id}"))
    try:
        state.lesson_book().update(lesson_id, enabled=enabled)
    except PlanBoardError as exc:
        _notice(error_text(exc), error=True)
        return
    _notice(t("lesson_toggled_on" if enabled else "lesson_toggled_off", id=lesson_id))


def _delete(lesson_id: int) -> None:
    try:
        state.lesson_book().delete(lesson_id)
    except PlanBoardError as exc:
        _notice(error_text(exc), error=True)
        return
    for prefix in ("lesson_text_", "lesson_enabled_"):
        st.session_state.pop(f"{prefix}{lesson_id}", None)
    _notice(t("lesson_deleted", id=lesson_id))


def _render_lesson(lesson: Lesson) -> str | None:
    """One lesson card; returns the run to open when its button was clicked."""
    lesson_id = lesson.id
    text_key, enabled_key = f"lesson_text_{lesson_id}", f"lesson_enabled_{lesson_id}"
    st.session_state.setdefault(text_key, lesson.text)
    st.session_state[enabled_key] = lesson.enabled  # the store decides
    created = lesson.created_at.strftime("%Y-%m-%d %H:%M") if lesson.created_at else "—"
    with st.container(border=True, key=f"lesson_{lesson_id}"):
        st.caption(t("lesson_meta", id=lesson_id, created=created,
                     tools=literal(", ".join(lesson.tools)) or t("lesson_no_tools")))
        st.text_area(t("lesson_text"), key=text_key, height=80)
        toggle, save, delete, link = st.columns([1, 1, 1, 2], vertical_alignment="center")
        toggle.toggle(t("lesson_enabled"), key=enabled_key, on_change=_toggle,
                      args=(lesson_id,))
        save.button(t("lesson_save"), key=f"lesson_save_{lesson_id}", icon=":material/save:",
                    on_click=_save, args=(lesson_id,), width="stretch")
        delete.button(t("lesson_delete"), key=f"lesson_delete_{lesson_id}",
                      icon=":material/delete:", on_click=_delete, args=(lesson_id,),
                      width="stretch")
        if lesson.run_id:
            if link.button(t("lesson_open_run", run_id=lesson.run_id),
                           key=f"lesson_run_{lesson_id}", icon=":material/open_in_new:",
                           width="stretch"):
                return lesson.run_id
        else:
            link.caption(t("lesson_no_run"))
    return None


def main() -> None:
    """Draw every lesson, newest first."""
    page_header("lessons_title", "lessons_caption")
    if notice := st.session_state.pop("lessons_notice", None):
        message, error = notice
        (st.error if error else st.success)(message)
    lessons = state.lesson_book().list_lessons()
    if not lessons:
        st.info(t("lessons_empty"))
        return
    st.caption(t("lessons_count", count=len(lessons),
                 enabled=sum(lesson.enabled for lesson in lessons)))
    for lesson in lessons:
        run_id = _render_lesson(lesson)
        if run_id:
            st.switch_page("pages/run.py", query_params={"run": run_id})


main()
