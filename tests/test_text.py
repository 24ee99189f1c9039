"""Short text forms of values."""

from core.base.text import clip, preview


def test_preview_folds_white_space_and_cuts_with_an_ellipsis():
    assert preview({"订单": "88231", "ok": True}, 40) == '{"订单": "88231", "ok": true}'
    assert preview("a\n  b\tc", 10) == "a b c"
    assert preview("x" * 12, 10) == "x" * 9 + "…"


def test_clip_keeps_line_breaks():
    assert clip("a\nb", 10) == "a\nb"
    assert clip("abcdef", 4) == "abc…"
