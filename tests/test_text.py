"""Short text forms of values, the one tokenizer, and the one <think> stripper."""

from core.base.language import terms, words
from core.base.text import clip, preview


def test_preview_folds_white_space_and_cuts_with_an_ellipsis():
    assert preview({"订单": "88231", "ok": True}, 40) == '{"订单": "88231", "ok": true}'
    assert preview("a\n  b\tc", 10) == "a b c"
    assert preview("x" * 12, 10) == "x" * 9 + "…"


def test_clip_keeps_line_breaks():
    assert clip("a\nb", 10) == "a\nb"
    assert clip("abcdef", 4) == "abc…"


def test_words_split_chinese_into_bigrams_and_keep_english_words():
    assert words("退款政策 for Orders query_order 88231 单") == [
        "退款", "款政", "政策", "for", "orders", "query_order", "88231", "单"]
    assert words("退款", characters=True) == ["退", "款", "退款"]


def test_terms_drop_short_english_words_but_keep_chinese_bigrams():
    assert terms("退款政策 for an order") == {"退款", "款政", "政策", "for", "order"}
