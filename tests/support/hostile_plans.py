"""Hostile planner replies and plan files: deep nesting, floods, odd ids, broken text.

Shared by the parser's fuzz tests and by ``python -m bench.parser`` (so it imports no
pytest). Every generator is seeded, so a run produces the same inputs every time.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator

__all__ = ["CATEGORIES", "hostile_replies"]

_WORDS = ["look up", "order 88231", "refund", "计算", "总结", "services", "<think>", "```",
          "{{s1.status}}", "s1", "s-1", "step_2", " ", "\u0000", "\x1b[31m", "\ud800"]


def _plan(steps: list[dict]) -> str:
    return json.dumps({"goal": "g", "steps": steps}, ensure_ascii=False)


def _deep_nesting(rng: random.Random) -> str:
    depth = rng.choice([40, 500, 5_000, 200_000])
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}"), ('{"plan":', "}")])
    inner = _plan([{"id": "s1", "description": "x"}]) if rng.random() < 0.5 else "1"
    return opener * depth + inner + closer * rng.choice([0, depth])


def _floods(rng: random.Random) -> str:
    token = rng.choice(["<think>", "</think>", "<thinking>", "```", "```json\n", "[", "{",
                        '{"steps":', ",", "\\", '"'])
    body = token * rng.choice([1_000, 30_000, 150_000])
    tail = _plan([{"id": "s1", "description": "x"}]) if rng.random() < 0.5 else ""
    return body + tail if rng.random() < 0.5 else tail + body


def _huge_strings(rng: random.Random) -> str:
    size = rng.choice([10_000, 200_000, 900_000])
    field = rng.choice(["id", "description", "tool", "condition", "depends_on"])
    value = rng.choice([" ", "9", "s", "a", "中", "{{"]) * size
    step = {"id": "s1", "description": "x", field: value}
    return _plan([step, {"id": "s2", "description": "y", "depends_on": ["s1"]}])


def _odd_ids(rng: random.Random) -> str:
    pool = ["s1", "s1", "s-1", "S2", " ", "", "step_3", "#4", "0", "-5", 7, 7.0, True, None,
            "x" * 50, "s" + "9" * 12, "s99999999999", "步骤1", "\ud800"]
    steps = []
    for position in range(rng.randint(1, 6)):
        step_id = rng.choice(pool)
        deps = rng.sample(pool, k=rng.randint(0, 2))
        steps.append({"id": step_id, "description": f"step {position}",
                      "depends_on": deps, "args": {"v": f"{{{{{rng.choice(pool)}.x}}}}"},
                      "condition": f"{rng.choice(pool)}.status == 'ok'"})
    return json.dumps({"steps": steps}, ensure_ascii=False)


def _broken_text(rng: random.Random) -> str:
    base = _plan([{"id": f"s{i}", "description": rng.choice(_WORDS),
                   "depends_on": [f"s{i - 1}"] if i > 1 else []} for i in range(1, 5)])
    chars = list(base)
    for _ in range(rng.randint(1, 40)):
        chars.insert(rng.randrange(len(chars) + 1), rng.choice(_WORDS))
    return "".join(chars)


def _long_plans(rng: random.Random) -> str:
    count = rng.choice([200, 5_000, 20_000])
    chain = rng.random() < 0.5
    steps = [{"id": f"s{i}", "description": "d",
              "depends_on": [f"s{i - 1}"] if chain and i > 1 else []} for i in range(1, count)]
    if rng.random() < 0.5:  # close a cycle at the end
        steps[0]["depends_on"] = [f"s{count - 1}"]
    return _plan(steps)


def _conditions(rng: random.Random) -> str:
    kind = rng.choice(["not", "paren", "ops", "pow"])
    n = rng.choice([50, 1_200, 50_000])
    condition = {
        "not": "not " * n + "True",
        "paren": "(" * n + "1" + ")" * n,
        "ops": " + ".join(["s1.x"] * n),
        "pow": "9" + "**9" * min(n, 200),
    }[kind]
    return _plan([{"id": "s1", "description": "a"},
                  {"id": "s2", "description": "b", "depends_on": ["s1"],
                   "condition": condition}])


CATEGORIES: dict[str, Callable[[random.Random], str]] = {
    "deep nesting": _deep_nesting,
    "floods": _floods,
    "huge strings": _huge_strings,
    "odd ids": _odd_ids,
    "broken text": _broken_text,
    "long plans": _long_plans,
    "conditions": _conditions,
}


def hostile_replies(per_category: int, seed: int = 7) -> Iterator[tuple[str, str]]:
    """(category, reply) pairs, ``per_category`` of each, the same for the same seed."""
    rng = random.Random(seed)
    for name, make in CATEGORIES.items():
        for _ in range(per_category):
            yield name, make(rng)
