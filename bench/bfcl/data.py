"""BFCL v4 ``multi_turn_base``: its entries, ground truth and function docs, read from bfcl-eval.

The package ``bfcl-eval`` (``pip install --no-deps bfcl-eval mpmath``) ships the data, the
executable backends and the official checker; nothing here needs its other dependencies.
An entry's tools are the function docs of its involved classes, less the functions the
entry excludes (``excluded_function``; BFCL's own runner offers them anyway). A doc's types
are BFCL's Python-flavoured names ("dict", "float", "tuple", "any"): they become JSON
schema types, as BFCL's own handlers convert them, except "any", which stays unconstrained
(BFCL sends it as a string).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["CATEGORY", "Entry", "entries", "entry_tools", "json_schema",
           "load_entries", "pick_ids"]

CATEGORY = "multi_turn_base"
_JSON_TYPES = {"dict": "object", "object": "object", "float": "number", "number": "number",
               "integer": "integer", "int": "integer", "string": "string", "str": "string",
               "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
               "tuple": "array"}


@dataclass
class Entry:
    """One BFCL entry: its id, the user's turns, the backends' starting state and the
    ground truth (one list of call strings per turn)."""

    id: str
    turns: list[str]
    initial_config: dict[str, Any]
    involved_classes: list[str]
    excluded: list[str]
    ground_truth: list[list[str]]
    raw: dict[str, Any] = field(repr=False)

    @property
    def number(self) -> int:
        """The entry's index in the category (``multi_turn_base_17`` → 17)."""
        return int(self.id.rsplit("_", 1)[1])


def _data_root() -> Path:
    try:
        from bfcl_eval.constants.eval_config import PROMPT_PATH
    except ImportError as exc:  # the one dependency this benchmark needs
        raise SystemExit("error: BFCL's data is missing; install it with "
                         "pip install --no-deps bfcl-eval mpmath") from exc
    return Path(PROMPT_PATH)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


@cache
def load_entries() -> tuple[Entry, ...]:
    """Every entry of the category, in BFCL's order."""
    root = _data_root()
    questions = _lines(root / f"BFCL_v4_{CATEGORY}.json")
    answers = {item["id"]: item["ground_truth"]
               for item in _lines(root / "possible_answer" / f"BFCL_v4_{CATEGORY}.json")}
    return tuple(Entry(id=item["id"],
                       turns=[_user_text(turn) for turn in item["question"]],
                       initial_config=item.get("initial_config") or {},
                       involved_classes=list(item["involved_classes"]),
                       excluded=list(item.get("excluded_function") or []),
                       ground_truth=answers[item["id"]], raw=item)
                 for item in questions)


def _user_text(turn: list[dict[str, Any]]) -> str:
    return "\n".join(str(message.get("content") or "") for message in turn
                     if message.get("role") == "user")


def entries(ids: list[str] | None = None) -> list[Entry]:
    """The entries named by ``ids`` (in that order; a bare number means
    ``multi_turn_base_N``), or all of them; KeyError names an unknown one."""
    by_id = {entry.id: entry for entry in load_entries()}
    if ids is None:
        return list(by_id.values())
    chosen = []
    for raw in ids:
        name = f"{CATEGORY}_{raw}" if raw.isdigit() else raw
        if name not in by_id:
            raise KeyError(f"no entry {raw!r} in {CATEGORY} (ids run from {CATEGORY}_0 to "
                           f"{CATEGORY}_{len(by_id) - 1})")
        chosen.append(by_id[name])
    return chosen


def pick_ids(size: int, seed: int) -> list[str]:
    """A seeded sample of ``size`` entry ids, in BFCL's order (the same seed gives the
    same entries on every machine)."""
    every = [entry.id for entry in load_entries()]
    if not 1 <= size <= len(every):
        raise ValueError(f"a sample holds 1 to {len(every)} entries, not {size}")
    chosen = set(random.Random(seed).sample(every, size))
    return [entry_id for entry_id in every if entry_id in chosen]


@cache
def _class_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    path = _data_root() / "multi_turn_func_doc" / MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]
    return tuple(_lines(path))


def entry_tools(entry: Entry) -> list[tuple[str, dict[str, Any]]]:
    """``(class name, function doc)`` for each function the entry offers."""
    return [(class_name, doc) for class_name in entry.involved_classes
            for doc in _class_docs(class_name) if doc["name"] not in entry.excluded]


def json_schema(doc_schema: dict[str, Any]) -> dict[str, Any]:
    """A BFCL parameter or response schema as JSON schema (types renamed, recursively)."""
    converted: dict[str, Any] = {}
    for key, value in doc_schema.items():
        if key == "type":
            if value in _JSON_TYPES:
                converted["type"] = _JSON_TYPES[value]
        elif key == "properties" and isinstance(value, dict):
            converted[key] = {name: json_schema(item) for name, item in value.items()}
        elif key == "items" and isinstance(value, dict):
            converted[key] = json_schema(value)
        else:
            converted[key] = value
    return converted
