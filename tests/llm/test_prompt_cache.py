"""What a server's prompt cache spares: reported cached tokens, and the one-slot estimate."""

from __future__ import annotations

import json

from core.base.usage import Usage
from core.llm.prompt_cache import PromptCache, rendered, shared_prefix
from core.llm.reply import ChatReply, ToolCall, parse_reply

SYSTEM = {"role": "system", "content": "You plan tasks. " * 40}


def reply(content: str = "{}", prompt: int = 100, cached: int | None = None,
          calls: list[ToolCall] | None = None) -> ChatReply:
    return ChatReply(content=content, tool_calls=calls or [], cached_tokens=cached,
                     usage=Usage(llm_calls=1, prompt_tokens=prompt, completion_tokens=5))


def body(usage: dict) -> str:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}}],
                       "usage": usage})


def test_the_cached_tokens_a_server_reports_are_read():
    openai = parse_reply(body({"prompt_tokens": 900, "completion_tokens": 3,
                               "prompt_tokens_details": {"cached_tokens": 768}}), "u")
    deepseek = parse_reply(body({"prompt_tokens": 900, "completion_tokens": 3,
                                 "prompt_cache_hit_tokens": 640}), "u")
    silent = parse_reply(body({"prompt_tokens": 900, "completion_tokens": 3}), "u")
    assert (openai.cached_tokens, deepseek.cached_tokens, silent.cached_tokens) == (
        768, 640, None)


def test_shared_prefix_counts_the_characters_two_texts_start_with():
    assert shared_prefix("abcdef", "abcxyz") == 3
    assert shared_prefix("", "abc") == 0 and shared_prefix("abc", "abc") == 3
    assert shared_prefix("abc", "abcd") == 3


def test_tools_are_laid_out_after_the_system_turn():
    tools = [{"type": "function", "function": {"name": "f"}}]
    text = rendered([SYSTEM, {"role": "user", "content": "hi"}], tools)
    assert text.index("<tools>") > text.index("You plan") and text.index("<tools>") < text.index(
        "<user>hi")
    assert rendered([{"role": "user", "content": "hi"}], tools).startswith("<tools>")


def test_a_first_call_reads_everything_and_a_follow_up_turn_only_what_is_new():
    cache = PromptCache()
    ask = [SYSTEM, {"role": "user", "content": "Plan: where is my parcel?"}]
    first = cache.use(ask, None, reply('{"steps": []}', prompt=200))
    assert (first.cached_tokens, first.reread_tokens, first.reported) == (0, 200, False)
    retry = [*ask, {"role": "assistant", "content": '{"steps": []}'},
             {"role": "user", "content": "Your plan could not be used."}]
    second = cache.use(retry, None, reply(prompt=230))
    assert second.shared_chars == len(rendered(ask))  # the reply is not counted as served
    assert 150 <= second.cached_tokens < 230 and second.reread_tokens < 80


def test_a_new_prompt_shares_only_its_common_start_with_the_one_before():
    cache = PromptCache()
    cache.use([SYSTEM, {"role": "user", "content": "first request"}], None, reply())
    other = cache.use([{"role": "system", "content": "You execute steps."},
                       {"role": "user", "content": "first request"}], None, reply(prompt=50))
    assert other.shared_chars == len("<system>You ")
    again = cache.use([{"role": "system", "content": "You execute steps."},
                       {"role": "user", "content": "first request"}], None, reply(prompt=50))
    assert again.cached_tokens == 50  # the same prompt again: all of it


def test_a_reported_count_wins_over_the_estimate():
    cache = PromptCache()
    used = cache.use([SYSTEM], None, reply(prompt=100, cached=64))
    assert (used.cached_tokens, used.reread_tokens, used.reported) == (64, 36, True)


def test_a_tool_call_and_its_result_follow_the_prompt_the_cache_holds():
    cache = PromptCache()
    call = ToolCall(id="c1", name="query_order", arguments='{"order_id": "1"}')
    ask = [SYSTEM, {"role": "user", "content": "q"}]
    cache.use(ask, None, reply(content="", calls=[call]))
    after = [*ask, {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "query_order", "arguments": '{"order_id": "1"}'}}]},
             {"role": "tool", "content": "{}"}]
    used = cache.use(after, None, reply(prompt=120))
    assert used.shared_chars == len(rendered(ask))


def test_chinese_text_weighs_a_token_a_character():
    cache = PromptCache()
    english = {"role": "system", "content": "x" * 400}  # about 100 tokens
    cache.use([english], None, reply(prompt=200))
    used = cache.use([english, {"role": "user", "content": "订" * 100}], None,
                     reply(prompt=200))  # about 100 more
    assert 90 <= used.cached_tokens <= 110
