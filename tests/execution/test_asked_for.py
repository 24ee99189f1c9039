"""An answer that leaves out the value the request asks for by name, although a lookup
found it, gets that value quoted under it; an answer that states it, however written, does
not (scripted OpenAI-compatible endpoint, weak-model checks on and off)."""

from __future__ import annotations

import pytest

from core.execution.asked_for import unstated_values
from core.execution.scheduler import RunOptions, run_plan
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.session import request_language
from core.tools.registry import ToolRegistry, make_tool
from tests.support.fake_openai import text

APPROVED = RunOptions(confirm_side_effects=False)


def library() -> ToolRegistry:
    """A person's own tools: nothing in the engine knows their fields."""
    def find_book(title: str) -> dict:
        """Find a book in the library catalogue.

        Args:
            title: the book's title.
        """
        return {"title": title, "isbn": "978-0-14-044913-6", "shelf": "B12", "copies": 3,
                "status": "on_loan", "due_back": "2026-12-19"}

    def flight_status(flight: str) -> dict:
        """The status of a flight today.

        Args:
            flight: the flight number, for example "XY100".
        """
        return {"flight": flight, "gate": "E12", "status": "delayed",
                "departure_time": "2026-12-07 18:40"}

    def account(account_no: str) -> dict:
        """An account's balance.

        Args:
            account_no: the account number.
        """
        return {"account_no": account_no, "balance": 12500.5, "currency": "CNY",
                "state": "active"}

    tools = ToolRegistry()
    for function in (find_book, flight_status, account):
        tools.add(make_tool(function, read_only=True))
    return tools


CASES = {  # request → (its tool and arguments, an answer without the value, right answers)
    "What is the ISBN of War and Peace?": (
        ("find_book", {"title": "War and Peace"}),
        "War and Peace is on loan (3 copies, shelf B12).",
        ["The ISBN of War and Peace is 9780140449136.",
         "You will find it under ISBN 978 0 14 044913 6; it is on loan until 19 December."]),
    "CA981 航班的登机口是哪个？": (
        ("flight_status", {"flight": "CA981"}),
        "CA981 航班延误了，预计 18:40 起飞。",
        ["CA981 航班在 E12 登机口登机，目前延误。", "登机口：e12。"]),
    "What is the balance of account 6217?": (
        ("account", {"account_no": "6217"}),
        "Account 6217 is active.",
        ["Account 6217 holds 12,500.50 CNY.", "Roughly 12.5k CNY.", "About 12,500 yuan."]),
    "账户 6217 的余额是多少？": (
        ("account", {"account_no": "6217"}),
        "账户 6217 状态正常，币种 CNY。",
        ["账户 6217 的余额约为 1.25 万元。", "余额 12500.5 元。"]),
}


def _plan(request: str) -> Plan:
    (tool, args), _, _ = CASES[request]
    return Plan(goal=request, language=request_language(request), steps=[
        Step(id="s1", description="Look it up", tool=tool, args=args),
        Step(id="s2", description="Answer the user", depends_on=["s1"])])


def _answers(fake_openai, request: str, replies: list[str], *, weak: bool) -> list[str]:
    fake_openai.script(*(text(reply) for reply in replies))
    with OpenAIChatModel(fake_openai.settings(weak_model_checks=weak)) as model:
        engine = Engine(registry=library(), model=model)
        outcomes = [run_plan(_plan(request), engine, options=APPROVED) for _ in replies]
    assert all(outcome.status == "completed" for outcome in outcomes)
    return [outcome.answer or "" for outcome in outcomes]


@pytest.mark.parametrize("weak", [True, False], ids=["weak checks on", "weak checks off"])
@pytest.mark.parametrize("request_text", list(CASES))
def test_an_answer_without_the_value_asked_for_gets_it_quoted_and_a_right_one_not(
        fake_openai, request_text, weak):
    _, wrong, right = CASES[request_text]
    [flagged, *passed] = _answers(fake_openai, request_text, [wrong, *right], weak=weak)
    assert passed == right
    assert flagged.startswith(f"{wrong}\n\n⚠️ ")
    assert flagged.count("⚠️") == 1


def test_the_note_names_the_field_and_its_value_in_the_request_s_language(fake_openai):
    [english] = _answers(fake_openai, "What is the ISBN of War and Peace?",
                         ["War and Peace is on loan (3 copies, shelf B12)."], weak=True)
    assert english == (
        "War and Peace is on loan (3 copies, shelf B12).\n\n⚠️ The request asks for isbn, "
        "which s1 (Look it up) found, but the answer above does not state it: isbn "
        "978-0-14-044913-6")
    [chinese] = _answers(fake_openai, "CA981 航班的登机口是哪个？",
                         ["CA981 航班延误了，18:40 起飞。"], weak=True)
    assert chinese.endswith("⚠️ 请求问到了 gate，s1（Look it up）已经查到，但以上回答没有给出："
                            "gate E12")


def _done(request: str, result: dict, *, tool: str = "account") -> Plan:
    return Plan(goal=request, steps=[
        Step(id="s1", description="Look it up", tool=tool, args={}, status="completed",
             result=result),
        Step(id="s2", description="Answer the user", depends_on=["s1"])])


def test_what_the_request_gives_or_a_word_retold_is_not_checked():
    """The account number the person gave, a status in words, a field nobody asked for."""
    asked = "What is the state of account 6217?"
    plan = _done(asked, {"account_no": "6217", "state": "active", "balance": 12500.5})
    assert unstated_values("账户正常。", plan, library()) == []
    other = _done("Is account 6217 active?", {"account_no": "6217", "balance": 12500.5})
    assert unstated_values("Yes, it is.", other, library()) == []
    checked = _done("Check account 6217.", {"checked": 1, "balance": 12500.5})
    assert unstated_values("It is fine.", checked, library()) == []  # a verb, not a field


def test_a_side_effect_is_left_to_the_receipts():
    tools = library()
    tools.add(make_tool(_refund))
    plan = _done("What is the refund number for order 7?", {"refund_no": "RF77001"},
                 tool="_refund")
    assert unstated_values("Refunded.", plan, tools) == []


def _refund(order: str) -> dict:
    """Refund an order.

    Args:
        order: the order.
    """
    return {"refund_no": "RF77001"}
