"""The steps of a planning reply that is still being written, each as soon as it is complete.

:class:`StepReader` is fed the reply's text as it grows and finds the ``"steps"`` array
(or a bare array of steps), then each step object in it whose closing brace has arrived.
Only the finding is incremental: the complete objects are read by
:func:`core.plan.parse.parse_plan`, the parser of finished replies, so a step shown early
is read exactly as the finished plan's would be. What it yields is a preview: the finished
reply is parsed, repaired and validated as a whole, and only that plan is approved.
"""

from __future__ import annotations

import re

from core.errors import PlanParseError
from core.plan.model import Step
from core.plan.parse import parse_plan

__all__ = ["StepReader"]

_STEPS_KEY = re.compile(r'"steps"\s*:\s*\[')
_BARE_ARRAY = re.compile(r"\s*(?:```[\w-]*\s*)?\[")
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


class StepReader:
    """Reads the complete step objects of a growing planning reply (one reader per reply).

    :meth:`feed` takes the whole text so far; text that does not continue what was fed
    (the reply was asked for again) starts the reading over.
    """

    def __init__(self, goal: str = "") -> None:
        self.goal = goal
        self._reset("")

    def _reset(self, text: str) -> None:
        self._text = text
        self._position = -1  # where to scan next inside the array; -1: array not found
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._object_start = 0
        self._objects: list[str] = []
        self._closed = False
        self.steps: list[Step] = []

    def feed(self, text: str) -> list[Step]:
        """The steps read so far when ``text`` completed another one, else []."""
        if not text.startswith(self._text):
            self._reset("")
        self._text = text
        if self._closed:
            return []
        if self._position < 0 and not self._find_array():
            return []
        found = len(self._objects)
        self._scan()
        if len(self._objects) == found:
            return []
        return self._read()

    def _find_array(self) -> bool:
        """Place the scan just inside the steps array, once its opening bracket arrived."""
        start = self._after_thinking()
        if start is None:
            return False
        keyed = _STEPS_KEY.search(self._text, start)
        bare = _BARE_ARRAY.match(self._text, start)
        found = keyed or bare
        if found is None:
            return False
        self._position = found.end()
        return True

    def _after_thinking(self) -> int | None:
        """Where the answer starts: past a closed ``<think>`` block; None while it is open."""
        if _THINK_OPEN.search(self._text) is None:
            return 0
        closings = list(_THINK_CLOSE.finditer(self._text))
        return closings[-1].end() if closings else None

    def _scan(self) -> None:
        """Walk the new characters, noting each object that closes at the array's level."""
        text = self._text
        for index in range(self._position, len(text)):
            char = text[index]
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif char == "\\":
                    self._escaped = True
                elif char == '"':
                    self._in_string = False
            elif char == '"':
                self._in_string = True
            elif char in "{[":
                if self._depth == 0:
                    self._object_start = index
                self._depth += 1
            elif char in "}]":
                if self._depth == 0:  # the steps array itself closed
                    self._closed = True
                    break
                self._depth -= 1
                if self._depth == 0 and char == "}":
                    self._objects.append(text[self._object_start:index + 1])
        self._position = len(text)

    def _read(self) -> list[Step]:
        """Every complete object read as a plan's steps are; [] when they do not read."""
        try:
            plan = parse_plan('{"steps": [' + ", ".join(self._objects) + "]}", self.goal)
        except PlanParseError:
            self._objects.pop()  # not a step (yet): the next complete object may read
            return []
        self.steps = plan.steps
        return list(self.steps)
