"""How a request reads as stages: "first … then … finally …", a numbered list, 先……再……最后…….

About language, not about any tool, like :mod:`core.planning.clauses`: a request is cut at
sentence ends, numbered items and stage words (first, then, next, after that, finally,
先, 然后, 接着, 再, 最后 …); a sentence that holds a stage word is an enumeration of
stages, so it is cut at its commas too ("collect …, compare …, count …, then write …"). A
heading before a colon ("Quarterly review: …") names the whole and is no stage.

:func:`read_stages` says whether the request is a long multi-stage task, the router's
"hierarchical" answer: at least :data:`MIN_STAGES` stages, announced by a stage word or a
numbered list. Two stages ("back up, then upgrade") stay one plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MIN_STAGES", "Stages", "read_stages", "split_stages"]

MIN_STAGES = 3
_MAX_HEADING = 48  # characters of a "Heading:" that names the whole request
_SENTENCES = re.compile(r"[。；;！!？?\n]+|\.(?:\s+|$)")
_NUMBERED = re.compile(r"(?:^|\s)(?:\(?\d{1,2}[.)、]|[一二三四五六七八九十]、|[①-⑩])\s*")
_STAGE_WORD = re.compile(
    r"\b(?:first(?:ly)?|then|next|after that|afterwards|finally|lastly|at the end)\b"
    r"|首先|先|然后|接着|随后|之后|再|最后|最终", re.IGNORECASE)
_COMMAS = re.compile(r"[,，、]")
_LEADING = re.compile(
    r"^(?:and\s+)?(?:(?:first(?:ly)?|then|next|after that|afterwards|finally|lastly|at the end)"
    r"\b[\s,，]*)+|^(?:首先|先|然后|接着|随后|之后|再|最后|最终)+", re.IGNORECASE)
_HEADING = re.compile(rf"^([^:：]{{1,{_MAX_HEADING}}})[:：]\s*(.+)$", re.DOTALL)


@dataclass(frozen=True)
class Stages:
    """What :func:`read_stages` found: the stages, the heading, and whether stage words or
    numbers announced them."""

    parts: tuple[str, ...]
    heading: str = ""
    announced: bool = False

    @property
    def multi_stage(self) -> bool:
        """True for a long multi-stage task: enough stages, and announced as stages."""
        return self.announced and len(self.parts) >= MIN_STAGES


def split_stages(text: str) -> tuple[str, list[str], bool]:
    """(the heading, the stages, whether stage words or numbers announced them)."""
    text = (text or "").strip()
    heading = ""
    found = _HEADING.match(text)
    if found and not _STAGE_WORD.search(found.group(1)):
        heading, text = found.group(1).strip(), found.group(2)
    numbered = len(_NUMBERED.findall(text)) >= MIN_STAGES
    parts: list[str] = []
    announced = numbered
    for sentence in _SENTENCES.split(_NUMBERED.sub("\n", text) if numbered else text):
        pieces = [sentence]
        if _STAGE_WORD.search(sentence):
            announced = True
            pieces = _COMMAS.split(_STAGE_WORD.sub(lambda m: "," + m.group(0), sentence))
        parts += [_clean(piece) for piece in pieces]
    return heading, [part for part in parts if part], announced


def read_stages(text: str) -> Stages:
    """The stages of ``text`` (see the module docstring)."""
    heading, parts, announced = split_stages(text)
    return Stages(parts=tuple(parts), heading=heading, announced=announced)


_JOINERS = re.compile(r"^(?:and|or|以及|并且|并|和|而且)$|\s+(?:and|or)$", re.IGNORECASE)


def _clean(piece: str) -> str:
    """A stage without its stage words, joining words and outer punctuation ("" when only
    a joining word is left)."""
    piece = piece.strip(" \t,，、:：")
    piece = _LEADING.sub("", piece).strip(" \t,，、:：")
    return _JOINERS.sub("", piece).strip()
