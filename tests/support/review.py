"""What the review tests share: a plan an agent sends, and the run store's whole content."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from starlette.testclient import TestClient

from core.review.client import ReviewClient, Send
from core.store.run_store import RunStore
from core.store.schema import metadata
from tests.support.waiting import wait_until

__all__ = ["GRAPH_PLAN", "TOOLS", "agent_plan", "in_process", "langgraph_agent", "person_deciding",
           "store_content"]

TOOLS = [
    {"name": "search", "description": "Search the web",
     "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                    "required": ["query"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "fetch", "parameters": {"type": "object",
                                     "properties": {"url": {"type": "string"}}},
     "read_only": True},
    {"name": "send_email", "description": "Send an e-mail",
     "parameters": {"type": "object", "properties": {"to": {"type": "string"},
                                                     "body": {"type": "string"}}}},
]


def agent_plan(**extra: Any) -> dict[str, Any]:
    """A 4-step plan in the steps shape (the agent's own step names), with its tools."""
    return {"agent": "research-graph", "tools": TOOLS, "plan": {
        "goal": "Mail a summary of the news", "steps": [
            {"id": "find", "tool": "search", "args": {"query": "news"}},
            {"id": "read", "tool": "fetch", "args": {"url": "https://example.com/a"},
             "depends_on": ["find"]},
            {"id": "draft", "description": "Write the summary", "depends_on": ["read"]},
            {"id": "mail", "tool": "send_email", "args": {"to": "ann@example.com"},
             "depends_on": ["draft"]},
        ]}, **extra}


def store_content(store: RunStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the store: equal before and after means nothing was
    written."""
    with store.engine.connect() as conn:
        return {table.name: sorted(map(tuple, conn.execute(sa.select(table)).all()), key=repr)
                for table in metadata.sorted_tables}


def in_process(api: TestClient) -> Send:
    """The review client's way to the server, through the app's routes in this process
    (the TestClient takes no timeout: the server's own long poll bounds each call)."""
    def send(method: str, url: str, data: bytes | None, headers: dict[str, str],
             timeout: float) -> tuple[int, bytes]:
        answer = api.request(method, url, content=data, headers=headers)
        return answer.status_code, answer.content

    return send


def person_deciding(store: RunStore, decide: Callable[[RunStore, str], Any]) -> threading.Thread:
    """A person, in a thread of their own, who decides the first review once it is stored
    (as the run page would); the caller joins the thread."""
    def decide_first() -> None:
        review = wait_until(lambda: store.list_runs(), timeout=30)[0].run_id
        decide(store, review)

    thread = threading.Thread(target=decide_first)
    thread.start()
    return thread


GRAPH_PLAN = {"goal": "Mail Ann a summary of the news", "steps": [
    {"id": "find", "tool": "search", "args": {"query": "news"}},
    {"id": "read", "tool": "fetch", "args": {"url": "https://example.com/a"},
     "depends_on": ["find"]},
    {"id": "pick", "tool": "search", "args": {"query": "weather"}, "depends_on": ["read"]},
    {"id": "mail", "tool": "send_email", "args": {"to": "ann@example.com", "body": "news"},
     "depends_on": ["pick"]},
]}
"""The plan the LangGraph agent's planner model drafts: 4 steps, step 3 a search."""


def langgraph_agent(fake_openai: Any, client: ReviewClient) -> tuple[Any, list[tuple[str, dict]]]:
    """A real LangGraph graph (integrations.langgraph_review) whose planner is a chat model
    on the scripted endpoint (drafting :data:`GRAPH_PLAN`), and the calls its tools get."""
    import openai

    from integrations.langgraph_review import review_graph
    from tests.support.fake_openai import DEFAULT_KEY, text

    fake_openai.script(text(json.dumps(GRAPH_PLAN)))
    model = openai.OpenAI(base_url=fake_openai.base_url, api_key=DEFAULT_KEY)

    def planner(request: str) -> dict:
        reply = model.chat.completions.create(
            model="fake-planner", messages=[{"role": "user", "content": request}])
        return json.loads(reply.choices[0].message.content)

    calls: list[tuple[str, dict]] = []

    def tool(name: str) -> Callable[..., Any]:
        return lambda **args: calls.append((name, args)) or {"ok": name}

    tools = {name: tool(name) for name in ("search", "fetch", "send_email")}
    return review_graph(planner, tools, client, tool_schemas=TOOLS, timeout=30), calls
