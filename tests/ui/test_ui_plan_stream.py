"""AppTest of streamed planning on the Plan page: the steps show in the table and the graph
while the planner still writes the rest; review and approval wait for the finished plan."""

from __future__ import annotations

import json

from tests.support.app import drafted, open_app, wait_for
from tests.support.fake_openai import DEFAULT_KEY, FakeOpenAI, Hold, streamed
from tests.support.shown import graph_dots
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until
from ui.i18n import TEXT

REQUEST = "work out 2+2, then 3*3, and tell me both"
PLAN = json.dumps({"goal": REQUEST, "steps": [
    {"id": "s1", "description": "Work out 2+2", "tool": "calculate",
     "args": {"expression": "2+2"}, "depends_on": []},
    {"id": "s2", "description": "Work out 3*3", "tool": "calculate",
     "args": {"expression": "3*3"}, "depends_on": []},
    {"id": "s3", "description": "Tell the user both results", "tool": None,
     "depends_on": ["s1", "s2"]},
]}, indent=1)
FIRST_STEP_END = PLAN.rindex("}", 0, PLAN.index('"s2"')) + 1  # s1's closing brace


def _preview_ids(at) -> list[str]:
    return list(at.dataframe[0].value["id"]) if at.dataframe else []


def test_the_first_step_is_on_the_page_while_the_server_withholds_the_rest(monkeypatch):
    monkeypatch.setenv("PLANBOARD_WEAK_MODEL_CHECKS", "off")  # one reply, no corrective turn
    hold = Hold(after=PLAN[:FIRST_STEP_END])
    with FakeOpenAI(responder=lambda _body: PLAN) as server:
        server.script(streamed(PLAN, chunk_chars=16, hold=hold))
        at = open_app(base_url=server.base_url, api_key=DEFAULT_KEY, offline_mode=False,
                      plan_mode="plan")
        at.text_area(key="request").input(REQUEST).run()
        at.button(key="generate_plan").click().run()
        try:
            assert hold.reached.wait(DEFAULT_TIMEOUT_S), "the planner never asked"
            at = wait_for(at, lambda shown: _preview_ids(shown) == ["s1", "…"])
            # one step of three on the page, the second step's bytes not sent yet
            assert not hold.release.is_set()
            (dot,) = graph_dots(at)
            assert '"s1"' in dot and '"…"' in dot and '"s2"' not in dot
            assert "✓" not in dot  # nothing is read ahead unless asked
            assert any("(1 written so far)" in info.value for info in at.info)
            assert not _has(at, "approve_run")  # nothing to approve until the plan is checked
        finally:
            hold.release.set()
        at = drafted(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["plan"].ids() == ["s1", "s2", "s3"]
    assert _has(at, "approve_run")
    assert len(server.chat_bodies) == 1 and server.chat_bodies[0]["stream"] is True


def test_a_server_that_does_not_stream_gives_the_same_plan(monkeypatch):
    monkeypatch.setenv("PLANBOARD_WEAK_MODEL_CHECKS", "off")
    with FakeOpenAI(streams=False, responder=lambda _body: PLAN) as server:
        at = open_app(base_url=server.base_url, api_key=DEFAULT_KEY, offline_mode=False,
                      plan_mode="plan")
        at.text_area(key="request").input(REQUEST).run()
        at.button(key="generate_plan").click().run()
        at = drafted(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["plan"].ids() == ["s1", "s2", "s3"]


def _has(at, key: str) -> bool:
    return any(button.key == key for button in at.button)


def test_a_blank_plan_while_the_planner_writes_drops_the_plan_being_written(monkeypatch):
    monkeypatch.setenv("PLANBOARD_WEAK_MODEL_CHECKS", "off")
    hold = Hold(after=PLAN[:FIRST_STEP_END])
    with FakeOpenAI(responder=lambda _body: PLAN) as server:
        server.script(streamed(PLAN, chunk_chars=16, hold=hold))
        at = open_app(base_url=server.base_url, api_key=DEFAULT_KEY, offline_mode=False,
                      plan_mode="plan")
        at.text_area(key="request").input(REQUEST).run()
        at.button(key="generate_plan").click().run()
        try:
            assert hold.reached.wait(DEFAULT_TIMEOUT_S), "the planner never asked"
            at.button(key="blank_plan").click().run()
        finally:
            hold.release.set()
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "plan_drafting" not in at.session_state
    assert [step.description for step in at.session_state["plan"].steps] == [""]
    assert _has(at, "approve_run")


ORDER_PLAN = json.dumps({"goal": "where is order 88231", "steps": [
    {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
     "args": {"order_id": "88231"}, "depends_on": []},
    {"id": "s2", "description": "Tell the user where the order is", "tool": None,
     "depends_on": ["s1"]},
]}, indent=1)


def test_switched_on_the_order_is_looked_up_while_planning_and_the_run_uses_it(
        monkeypatch, runner):
    monkeypatch.setenv("PLANBOARD_WEAK_MODEL_CHECKS", "off")
    hold = Hold(after=ORDER_PLAN[:ORDER_PLAN.index('"s2"')])
    with FakeOpenAI(responder=lambda _body: "Order 88231 is on its way.") as server:
        server.script(streamed(ORDER_PLAN, chunk_chars=16, hold=hold))
        at = open_app(base_url=server.base_url, api_key=DEFAULT_KEY, offline_mode=False,
                      plan_mode="plan", read_ahead=True)
        at.text_area(key="request").input("where is order 88231").run()
        at.button(key="generate_plan").click().run()
        try:
            assert hold.reached.wait(DEFAULT_TIMEOUT_S), "the planner never asked"
            drafting = at.session_state["plan_drafting"][0]
            wait_until(lambda: drafting.read_ahead.results(),
                       what="the lookup to answer while the plan is written")
            # the preview shows the lookup done while the server still holds the rest
            at = wait_for(at, lambda shown: _preview_ids(shown) == ["s1", "…"])
            (dot,) = graph_dots(at)
            assert "✓" in dot and not hold.release.is_set()
        finally:
            hold.release.set()
        at = drafted(at)
        at.button(key="approve_run").click().run()
        assert not at.exception, [e.value for e in at.exception]
        run_id = at.query_params["run"]
        assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    completed = {e.step_id: e.data for e in runner.store.events(run_id)
                 if e.kind == "step_completed"}
    assert completed["s1"].get("read_ahead") is True
    assert completed["s1"]["result"]["order_id"] == "88231"
    at.run()  # the run page: s1's card says where its result came from
    assert sum(TEXT["card_read_ahead"]["en"] in caption.value for caption in at.caption) == 1
