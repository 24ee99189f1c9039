"""An answer in another language than the request's is rewritten once (fake server)."""

from __future__ import annotations

from core.base.usage import Usage
from core.execution.answer_language import in_language
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.runs.answers import answer_direct
from core.tools.toolsets import default_registry
from tests.support.fake_openai import text

ENGLISH = "Order 70412 is in transit; its last scan was at the Zhengzhou hub."
CHINESE = "订单 70412 正在运输中，最近一次扫描在郑州转运中心。"


class Tally:
    """What the rewrite adds its usage to."""

    def __init__(self) -> None:
        self.usage = Usage()


def test_an_answer_already_in_the_language_costs_nothing(fake_openai):
    tally = Tally()
    with OpenAIChatModel(fake_openai.settings()) as model:
        assert in_language(model, CHINESE, "zh", tally) == CHINESE
    assert fake_openai.chat_bodies == [] and tally.usage.llm_calls == 0


def test_an_english_answer_to_a_chinese_request_is_rewritten_keeping_its_facts(fake_openai):
    fake_openai.script(text(CHINESE, usage=(40, 20)))
    tally = Tally()
    with OpenAIChatModel(fake_openai.settings()) as model:
        assert in_language(model, ENGLISH, "zh", tally) == CHINESE
    [body] = fake_openai.chat_bodies
    assert "Chinese" in body["messages"][0]["content"] and "tools" not in body
    assert body["messages"][1]["content"] == ENGLISH
    assert tally.usage.llm_calls == 1 and tally.usage.prompt_tokens == 40


def test_a_rewrite_that_is_still_in_the_wrong_language_is_not_used(fake_openai):
    fake_openai.script(text("Sorry, here it is again: " + ENGLISH))
    with OpenAIChatModel(fake_openai.settings()) as model:
        assert in_language(model, ENGLISH, "zh", Tally()) == ENGLISH


def test_the_direct_answer_to_a_chinese_question_comes_back_in_chinese(fake_openai):
    fake_openai.script(text(ENGLISH), text(CHINESE))  # the lookups take no model call
    with OpenAIChatModel(fake_openai.settings()) as model:
        answer, usage, _ = answer_direct("订单 70412 的快递现在到哪里了？",
                                         Engine(registry=default_registry({}), model=model),
language="zh")
    assert answer == CHINESE and usage.llm_calls == 2
