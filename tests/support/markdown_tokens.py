"""Markdown as a CommonMark parser reads it (markdown-it-py, with GFM tables and strikes).

Streamlit's renderer and most Markdown viewers follow CommonMark, so the tokens tell which
constructs a text forms: the tests look for images, HTML and links in them.
"""

from __future__ import annotations

from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["kinds", "parse", "tokens"]

_PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def parse(text: str) -> list[Token]:
    """The block tokens of ``text``."""
    return _PARSER.parse(text)


def tokens(text: str) -> Iterator[Token]:
    """Every token of ``text``, inline ones included."""
    stack = list(reversed(parse(text)))
    while stack:
        token = stack.pop()
        yield token
        stack.extend(reversed(token.children or []))


def kinds(text: str) -> set[str]:
    """The kinds of token ``text`` forms (``image``, ``html_inline``, ``table_open`` …)."""
    return {token.type for token in tokens(text)}
