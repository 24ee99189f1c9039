"""``python -m core templates`` and ``run --template``: a saved plan reruns with new values
and no planning call, against the fake OpenAI-compatible server."""

from __future__ import annotations

import json

from core.cli.main import main
from tests.support.cli import use_endpoint
from tests.support.fake_openai import FakeOpenAI, text

REQUEST = "Check whether order {order} has arrived and tell me its status."
PLAN = {"goal": REQUEST.format(order="88231"), "steps": [
    {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
     "args": {"order_id": "88231"}, "depends_on": []},
    {"id": "s2", "description": "Say whether order 88231 arrived", "tool": None,
     "depends_on": ["s1"]},
]}


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def planning_requests(server: FakeOpenAI) -> list[dict]:
    """The chat requests that asked the planner for a plan (its principles are in them)."""
    return [body for body in server.chat_bodies
            if "Planning principles" in json.dumps(body["messages"])]


def planned_run(capsys, monkeypatch, server: FakeOpenAI) -> str:
    """A run of order 88231 whose plan the (fake) planner wrote; its id."""
    use_endpoint(monkeypatch, server)
    server.script(text(json.dumps(PLAN)), text("Order 88231 was delivered."))
    code, out, err = cli(capsys, "run", REQUEST.format(order="88231"), "--yes", "--json")
    assert code == 0, err
    assert len(planning_requests(server)) == 1
    return json.loads(out)["run_id"]


def test_a_saved_run_reruns_for_another_order_without_planning(capsys, monkeypatch,
                                                              fake_openai):
    run_id = planned_run(capsys, monkeypatch, fake_openai)
    code, out, _ = cli(capsys, "templates", "save", run_id, "--name", "order-status")
    assert code == 0
    assert "Saved template order-status" in out and "parameter order_id (it was 88231)" in out

    asked_before = len(fake_openai.chat_bodies)
    fake_openai.script(text("Order 66001 is being refunded."))
    code, out, err = cli(capsys, "run", "--template", "order-status",
                         "--param", "order_id=66001", "--yes", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["status"] == "completed"
    s1 = result["plan"]["steps"][0]
    assert s1["resolved_args"] == {"order_id": "66001"} and s1["result"]["order_id"] == "66001"
    assert s1["llm_calls"] == 0
    assert result["plan"]["goal"] == REQUEST.format(order="66001")
    new_requests = fake_openai.chat_bodies[asked_before:]
    assert len(new_requests) == 1  # the answer step only
    assert len(planning_requests(fake_openai)) == 1  # still only the first run's


def test_list_show_and_delete_speak_json_and_name_errors_in_one_line(capsys, monkeypatch,
                                                                     fake_openai):
    run_id = planned_run(capsys, monkeypatch, fake_openai)
    assert cli(capsys, "templates", "save", run_id, "--name", "order-status")[0] == 0
    code, out, _ = cli(capsys, "templates", "list", "--json")
    [listed] = json.loads(out)
    assert listed["name"] == "order-status" and listed["source_run"] == run_id
    assert listed["saved_by"] and listed["created_at"]
    code, out, _ = cli(capsys, "templates", "show", "order-status", "--json")
    shown = json.loads(out)
    assert shown["request"] == REQUEST.format(order="{{order_id}}")
    assert shown["plan"]["steps"][0]["args"] == {"order_id": "{{order_id}}"}

    for argv, says in [
        (("templates", "save", run_id, "--name", "order-status"),
         "a template named order-status already exists"),
        (("templates", "save", run_id, "--name", "no spaces"), "is not a template name"),
        (("templates", "show", "nope"), "no template 'nope'"),
        (("run", "--template", "order-status", "--yes"),
         "missing: order_id (its parameters are: order_id)"),
        (("run", "--template", "order-status", "--param", "order=1", "--yes"),
         "no parameter order; its parameters are: order_id"),
        (("run", "--template", "order-status", "--param", "order_id", "--yes"),
         "--param order_id is not NAME=VALUE"),
    ]:
        code, _, err = cli(capsys, *argv)
        assert code == 1 and says in err and err.count("\n") == 1, (argv, err)

    code, out, _ = cli(capsys, "templates", "delete", "order-status")
    assert code == 0 and "Deleted template order-status" in out
    assert json.loads(cli(capsys, "templates", "list", "--json")[1]) == []
    assert cli(capsys, "templates", "delete", "order-status")[0] == 1


def test_plan_says_when_a_saved_plan_fits_and_how_to_run_it(capsys, monkeypatch,
                                                            fake_openai):
    run_id = planned_run(capsys, monkeypatch, fake_openai)
    assert cli(capsys, "templates", "save", run_id, "--name", "order-status")[0] == 0
    code, _, err = cli(capsys, "plan", REQUEST.format(order="70412"), "--offline")
    assert code == 0, err
    assert ("a saved plan fits: order-status (100% alike); start from it without planning: "
            "python -m core run --template order-status --param order_id=70412") in err
    code, _, err = cli(capsys, "plan", "Look up order 70412 and the weather in Paris.",
                       "--offline")
    assert code == 0, err
    assert "a saved plan fits" not in err
