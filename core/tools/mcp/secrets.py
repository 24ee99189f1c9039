"""Secrets of the MCP configuration: ``${VAR}`` expanded from the environment, and kept out of
everything PlanBoard writes.

A value a person puts in ``env`` or ``headers`` as ``${API_TOKEN}`` is a secret: it reaches the
server (its environment, its HTTP headers) and nothing else. :class:`Secrets` remembers the
expanded values so that whatever comes back from a server (a result, an error, the lines it
wrote to stderr) is redacted before it reaches a log, the run store or an export. Values
shorter than :data:`MIN_SECRET_CHARS` are not redacted: replacing every "1" or "on" would
garble results and protect nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MIN_SECRET_CHARS", "REFERENCE", "Secrets", "expand"]

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
MIN_SECRET_CHARS = 6


@dataclass(frozen=True)
class Secrets:
    """The expanded values of the ``${VAR}`` references (name -> value), never shown."""

    values: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __bool__(self) -> bool:
        return bool(self.values)

    def merged(self, other: Secrets) -> Secrets:
        """Both sets of secrets."""
        return Secrets({**self.values, **other.values})

    def redact(self, value: Any) -> Any:
        """``value`` with every secret in its text replaced by ``[secret VAR]`` (strings,
        and the strings inside lists and dicts, keys included)."""
        if not self.values:
            return value
        if isinstance(value, str):
            for name, secret in self._longest_first():
                if secret in value:
                    value = value.replace(secret, f"[secret {name}]")
            return value
        if isinstance(value, Mapping):
            return {self.redact(key): self.redact(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact(item) for item in value]
        return value

    def _longest_first(self) -> list[tuple[str, str]]:
        kept = [(name, secret) for name, secret in self.values.items()
                if len(secret) >= MIN_SECRET_CHARS]
        return sorted(kept, key=lambda pair: -len(pair[1]))


def expand(text: str, environ: Mapping[str, str]) -> tuple[str, Secrets, list[str]]:
    """``text`` with each ``${VAR}`` replaced by the environment's value; the secrets it
    used, and the names it needs that the environment lacks (left as written)."""
    used: dict[str, str] = {}
    missing: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            missing.append(name)
            return match.group(0)
        used[name] = environ[name]
        return environ[name]

    return REFERENCE.sub(substitute, text), Secrets(used), missing
