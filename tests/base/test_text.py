"""Short text forms of values, the one tokenizer, and the one <think> stripper."""

import time

from core.base.language import terms, words
from core.base.text import clip, clip_words, preview, strip_think


def test_preview_folds_white_space_and_cuts_with_an_ellipsis():
    assert preview({"订单": "88231", "ok": True}, 40) == '{"订单": "88231", "ok": true}'
    assert preview("a\n  b\tc", 10) == "a b c"
    assert preview("x" * 12, 10) == "x" * 9 + "…"


def test_clip_keeps_line_breaks():
    assert clip("a\nb", 10) == "a\nb"
    assert clip("abcdef", 4) == "abc…"


def test_clip_words_cuts_where_a_word_ends():
    policy = ("Orders that are not yet delivered cannot be refunded; orders past the 7-day "
              "window can get after-sales repair.")
    assert clip_words(policy, 80) == ("Orders that are not yet delivered cannot be refunded;…")
    assert clip_words(policy.replace(";", ","), 80) == (
        "Orders that are not yet delivered cannot be refunded, orders past the 7-day…")
    rule = "签收后 7 天内，商品完好、配件齐全即可申请退货。超过 7 天的订单不能退货"
    assert clip_words(rule, 30) == "签收后 7 天内，商品完好、配件齐全即可申请退货。…"
    assert clip_words("short", 10) == "short"
    assert clip_words("x" * 12, 10) == "x" * 9 + "…"  # no word end in reach: one long token


def test_words_split_chinese_into_bigrams_and_keep_english_words():
    assert words("退款政策 for Orders query_order 88231 单") == [
        "退款", "款政", "政策", "for", "orders", "query_order", "88231", "单"]
    assert words("退款", characters=True) == ["退", "款", "退款"]


def test_terms_drop_short_english_words_but_keep_chinese_bigrams():
    assert terms("退款政策 for an order") == {"退款", "款政", "政策", "for", "order"}


def test_strip_think_drops_thinking_blocks_stray_tags_and_cut_off_thoughts():
    assert strip_think("<think>why?</think>{\"a\": 1}") == '{"a": 1}'
    assert strip_think("<THINKING>a</thinking>b<think>c</think>d") == "bd"
    assert strip_think("reasoning</think>{}") == "{}"  # a provider that drops <think>
    assert strip_think("{}<think>cut off") == "{}"
    assert strip_think("no tags") == "no tags"


def test_strip_think_takes_linear_time_on_many_tags():
    started = time.perf_counter()
    assert strip_think("<think>" * 30000) == ""
    assert strip_think("</think>" * 30000 + "x") == "x"
    assert time.perf_counter() - started < 2.0  # a regex rescanning from every tag is quadratic
