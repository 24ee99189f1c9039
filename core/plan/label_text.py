"""Text of the graph's node labels: display widths, wrapping, clipping, and drawn width in em.

A label line is measured in display columns (a CJK or full-width character takes two, as
in a terminal) to wrap and clip it, and in em of Helvetica to size its node: the width a
browser draws it at, which Graphviz underestimates for CJK text.
"""

from __future__ import annotations

import unicodedata

__all__ = ["clip_columns", "display_width", "text_em", "wrap_label"]

ELLIPSIS = "…"

# Advance widths of Helvetica's printable ASCII, space to "~", in thousandths of an em
# (Adobe's metrics). Browsers draw "Helvetica" as Helvetica, Arial or Liberation Sans,
# which share these widths; anything else (CJK, ○, ◇, ⚠, …) comes from a fallback font
# and is counted a full em.
_ASCII_WIDTHS = (
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,  # space to /
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,  # 0 to ?
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,  # @ to O
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,  # P to _
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,  # ` to o
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,  # p to ~
)
_FIRST_ASCII = 0x20

# CJK punctuation that must not start a line: it stays with the character before it
_NO_LINE_START = frozenset("，。、；：！？）》」』】〕…")


def text_em(line: str) -> float:
    """How wide a browser draws ``line`` in Helvetica, in em (font sizes)."""
    return sum(_char_em(ch) for ch in line)


def _char_em(ch: str) -> float:
    index = ord(ch) - _FIRST_ASCII
    return _ASCII_WIDTHS[index] / 1000 if 0 <= index < len(_ASCII_WIDTHS) else 1.0


def display_width(text: str) -> int:
    """Columns ``text`` takes in a label: a wide (CJK) or full-width character counts two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def clip_columns(text: str, columns: int) -> str:
    """``text`` within ``columns`` display columns: cut, ending in "…", when it is wider."""
    if display_width(text) <= columns:
        return text
    kept, used = "", 0
    for ch in text:
        used += display_width(ch)
        if used > columns - 1:
            break
        kept += ch
    return kept + ELLIPSIS


def wrap_label(text: str, width: int) -> list[str]:
    """``text`` as lines of at most ``width`` display columns.

    Latin words break at spaces (a word longer than a line is cut); CJK text breaks between
    any two characters, except before closing punctuation. Runs of whitespace become one
    space.
    """
    lines: list[str] = []
    line, used = "", 0
    for segment, spaced in _segments(text):
        gap = 1 if spaced and line else 0
        size = display_width(segment)
        if used + gap + size <= width:
            line, used = line + " " * gap + segment, used + gap + size
            continue
        if line:
            lines.append(line)
        while size > width:
            head = _fitting_prefix(segment, width)
            lines.append(head)
            segment = segment[len(head):]
            size = display_width(segment)
        line, used = segment, size
    if line:
        lines.append(line)
    return lines


def _segments(text: str) -> list[tuple[str, bool]]:
    """Unbreakable pieces of ``text`` and whether a space comes before each.

    A wide character is a piece of its own; a run of narrow characters is one piece.
    """
    pieces: list[tuple[str, bool, bool]] = []
    for word in text.split():
        for index, ch in enumerate(word):
            wide = display_width(ch) == 2
            after_narrow = index > 0 and not pieces[-1][2]
            if index > 0 and (ch in _NO_LINE_START or (after_narrow and not wide)):
                segment, spaced, _ = pieces[-1]
                pieces[-1] = (segment + ch, spaced, wide)
            else:
                pieces.append((ch, index == 0, wide))
    return [(segment, spaced) for segment, spaced, _ in pieces]


def _fitting_prefix(segment: str, width: int) -> str:
    """The longest start of ``segment`` within ``width`` columns (at least one character)."""
    used = 0
    for end, ch in enumerate(segment):
        used += display_width(ch)
        if used > width:
            return segment[: max(end, 1)]
    return segment
