"""Untrusted text as Markdown (core.base.markup, ui.safe_text): nothing to fetch, no markup."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.base.markup import code_span, literal_text, markdown_text, printable
from tests.support.fuzzing import FUZZ
from tests.support.markdown_tokens import kinds, tokens
from tests.support.shown import shown
from ui import safe_text

HOST = "http://127.0.0.1:9/p.png?d=secret"
FETCHING = {"image", "html_inline", "html_block"}
# text biased towards what Markdown is made of, plus anything at all
MARKDOWNISH = st.text(alphabet=st.sampled_from(list("![]()<>`*_~#|-+=.:$&;\\/ \n\tab1hp")))
ANY_TEXT = st.one_of(MARKDOWNISH, st.text())


def test_images_in_every_form_become_text():
    for payload in (f"![x]({HOST})", f"![x][r]\n\n[r]: {HOST}", f"![r]\n\n[r]: {HOST}",
                    f"[![x]({HOST})](http://a)", f"\\![x]({HOST})", f"*![x]({HOST})*",
                    f"| a |\n|---|\n| ![x]({HOST}) |"):
        assert ("image" in kinds(payload)) != payload.startswith("\\")  # a real image
        assert "image" not in kinds(markdown_text(payload)), payload
        assert "image" not in kinds(literal_text(payload)), payload


def test_html_comments_and_autolinks_do_not_form():
    for payload in (f'<img src="{HOST}">', f"<{HOST}>", "<!-- x -->", "<?php ?>",
                    f'<div>\n<img src="{HOST}">\n</div>', "</p>"):
        assert kinds(payload) & {"html_inline", "html_block", "link_open"}, payload
        found = kinds(markdown_text(payload))
        assert not found & {"html_inline", "html_block", "link_open"}, payload


def test_answers_keep_tables_lists_emphasis_code_and_links():
    answer = ("## Orders\n\n| id | total |\n|---|---|\n| 88231 | 12 |\n\n- **bold** and *em*\n"
              "1. `code`\n\n```rust\nlet v = vec![1, 2];\nif a < b {}\n```\n\n[docs](http://a)")
    found = kinds(markdown_text(answer))
    assert {"table_open", "bullet_list_open", "ordered_list_open", "strong_open", "em_open",
            "code_inline", "fence", "link_open", "heading_open"} <= found
    fence = next(token for token in tokens(markdown_text(answer)) if token.type == "fence")
    assert fence.content.replace("\u2060", "") == "let v = vec![1, 2];\nif a < b {}\n"


def test_literal_text_shows_markup_as_written():
    text = "# not a heading\n1. not a list\n- no\n**no bold** [no link](x) `no code` $x$ |a|\n==="
    source = literal_text(text)
    assert kinds(source) <= {"paragraph_open", "paragraph_close", "inline", "text",
                             "hardbreak", "softbreak"}
    assert shown(source) == text


def test_control_characters_and_lone_surrogates_are_dropped_or_replaced():
    assert printable("a\x00b\x1bc\x7f\x85d\ufffe\r\ne\rf\tg\ud800") == "abcd\ne\nf\tg\ufffd"
    assert literal_text("a\x00\x1b[31mred") == "a\\[31mred"


def test_code_span_cannot_be_closed_from_inside():
    assert code_span("calculate") == "`calculate`"
    assert code_span("a ` b") == "``a ` b``"
    assert code_span("`x`") == "`` `x` ``"
    assert code_span("") == ""
    inner = [t for t in tokens(code_span(f"`` ![x]({HOST}) ``")) if t.type == "code_inline"]
    assert [t.content for t in inner] == [f"`` ![x]({HOST}) ``"]


def test_the_dashboard_helpers_take_any_value():
    assert safe_text.literal(ValueError("bad *input*")) == "bad \\*input\\*"
    assert safe_text.markdown(42) == "42"
    assert safe_text.code("query_order") == "`query_order`"


@FUZZ
@given(ANY_TEXT)
def test_no_markdown_text_forms_an_image_or_html(text):
    assert not kinds(markdown_text(text)) & FETCHING


@FUZZ
@given(ANY_TEXT)
def test_literal_text_forms_no_markup_and_shows_every_character(text):
    source = literal_text(text)
    assert kinds(source) <= {"paragraph_open", "paragraph_close", "inline", "text",
                             "hardbreak", "softbreak"}
    seen = "".join(t.content for t in tokens(source) if t.type == "text")
    assert "".join(seen.split()) == "".join(printable(text).split())


@FUZZ
@given(ANY_TEXT)
def test_a_code_span_is_one_span_holding_the_text(text):
    source = code_span(text)
    spans = [t.content for t in tokens(source) if t.type == "code_inline"]
    assert spans == ([" ".join(printable(text).split())] if source else [])
