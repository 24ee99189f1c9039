"""Tools page: where the tools come from (toolsets, MCP servers and their state), every tool
with its source, schema and side-effect flag, and a try-it box."""

from __future__ import annotations

import json

import streamlit as st

from core.base.messages import json_error
from core.errors import PlanBoardError
from core.runs.admin import restart_server
from core.runs.tool_trials import ToolTrial
from core.tools.sources import ToolSource
from core.tools.tool_texts import tool_description, tool_parameters
from ui import identity, state
from ui.frame import page_header
from ui.i18n import current_language, t
from ui.messages import error_text, said
from ui.safe_text import literal


def _render_sources() -> None:
    st.subheader(t("tool_sources"))
    if error := st.session_state.pop("tools_error", None):
        st.error(error)
    for source in state.tool_sources():
        _render_source(source)


def _render_source(source: ToolSource) -> None:
    kind = (t("source_mcp", transport=source.transport) if source.kind == "mcp"
            else t("source_toolset"))
    line = t("source_line", name=literal(source.name), kind=kind,
             state=t(f"source_{source.state}"), count=source.tools)
    if source.state == "failed":
        st.error(f"{line}  \n{literal(said(source.problem)) if source.problem else ''}",
                 icon=":material/error:")
        if source.kind == "mcp":  # after fixing its command, key or network: no restart
            st.button(t("server_restart"), key=f"retry_server_{source.name}",
                      icon=":material/refresh:", on_click=_restart, args=(source.name,),
                      disabled=not identity.allows("admin"))
    elif source.problem is not None:  # loaded, with something left out
        st.warning(f"{line}  \n{literal(said(source.problem))}", icon=":material/warning:")
    else:
        st.markdown(f":material/check_circle: {line}")


def _restart(name: str) -> None:
    try:
        restart_server(name, state.runner().store, identity.actor())
    except PlanBoardError as exc:
        st.session_state["tools_error"] = error_text(exc)


def _render_catalogue() -> None:
    for tool in state.registry():
        flag = " ⚠" if tool.side_effect else ""
        with st.expander(f"`{tool.name}`{flag}"):
            st.markdown(tool_description(tool, current_language()))
            badge = t("tool_side_effect") if tool.side_effect else t("tool_read_only")
            server = state.tool_server(tool.name)
            origin = (t("tool_from_server", server=literal(server)) if server
                      else t("tool_from_toolset", toolset=literal(tool.source or "—")))
            st.caption(f"{badge} · {origin}")
            st.json(tool_parameters(tool, current_language()), expanded=False)


def _try_tool() -> None:
    registry = state.registry()
    st.subheader(t("tool_try"))
    name = st.selectbox(t("tool_pick"), registry.names(), key="tool_pick")
    tool = registry.get(name)
    example = {key: "" for key in tool.required}
    st.text_area(t("tool_args"), key="tool_args", height=90,
                 placeholder=json.dumps(example, ensure_ascii=False))
    allowed = identity.allows("approve" if tool.side_effect else "run_read_only")
    if tool.side_effect and allowed:
        allowed = st.checkbox(t("tool_side_effect_ok"), key="tool_side_effect_ok")
    if st.button(t("tool_run"), key="tool_run", type="primary", disabled=not allowed):
        text = (st.session_state.get("tool_args") or "").strip() or "{}"
        try:
            args = json.loads(text)
        except json.JSONDecodeError as exc:
            st.error(t("tool_bad_json", error=literal(said(json_error(exc)))))
            return
        if not isinstance(args, dict):
            st.error(t("tool_not_object"))
            return
        try:
            trial = state.try_tool(name, args, actor=identity.actor())
        except PlanBoardError as exc:
            st.error(error_text(exc))
            return
        _render_trial(trial)


def _render_trial(trial: ToolTrial) -> None:
    if not trial.ok:
        st.error(literal(said(trial.error_message or trial.error)))
    else:
        st.success(t("tool_ok"))
        if isinstance(trial.result, dict | list):
            st.json(trial.result)
        else:
            st.code(str(trial.result))
    st.page_link("pages/run.py", label=t("tool_trial_run", run_id=trial.run_id),
                 query_params={"run": trial.run_id}, icon=":material/history:")


def main() -> None:
    """Draw the tool catalogue and the try-it box."""
    page_header("tools_title", "tools_caption")
    st.caption(t("tools_count", count=len(state.registry())))
    left, right = st.columns([3, 2], gap="medium")
    with left:
        _render_sources()
        st.subheader(t("tool_catalogue"))
        _render_catalogue()
    with right:
        _try_tool()


main()
