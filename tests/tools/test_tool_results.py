"""Whatever a tool returns, the registry hands back JSON-safe data and the run stores it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.runner import Runner
from core.store.run_store import RunStore
from core.tools.registry import ToolRegistry, make_tool
from core.tools.results import json_safe
from tests.support.fuzzing import FUZZ


def stored(value: object) -> object:
    """What a store gets back: strict JSON (no NaN), UTF-8 encodable, read again."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")
    return json.loads(text)


class Colour(enum.Enum):
    RED = "red"


class Size(enum.IntEnum):
    BIG = 3


@dataclasses.dataclass
class Point:
    x: int
    y: bytes


class Model(BaseModel):
    name: str
    at: dt.date


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")


class Hostile:
    """An object whose attribute lookups all fail with something other than AttributeError."""

    def __getattr__(self, name: str) -> object:
        raise RuntimeError(name)

    def __str__(self) -> str:
        return "hostile"


# ---- named cases ------------------------------------------------------------------------


def test_bytes_become_hex_text():
    assert json_safe(b"\x00\xff") == "X'00FF'"
    assert json_safe(bytearray(b"ab")) == "X'6162'"
    big = json_safe(bytes(5000))
    assert big.startswith("X'" + "00" * 4096 + "…'") and big.endswith("(5,000 bytes)")


def test_huge_integers_become_text_even_past_the_digit_limit():
    assert json_safe(2**63 - 1) == 2**63 - 1 and json_safe(-(2**63)) == -(2**63)
    assert json_safe(2**63) == str(2**63)
    product = 9**999
    for _ in range(7):
        product *= 9**999  # eight factors: past Python's 4,300-digit int-to-str limit
    assert json_safe(product) == f"<an integer of {product.bit_length():,} bits>"


def test_nan_infinities_sets_tuples_dates_and_objects():
    value = {
        "nan": math.nan, "inf": math.inf, "ninf": -math.inf, "set": {3, 1, 2},
        "frozen": frozenset({"b", "a"}), "tuple": (1, (2, 3)),
        "when": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "day": dt.date(2026, 1, 2),
        "decimal": Decimal("1.10"), "colour": Colour.RED, "size": Size.BIG,
        "point": Point(1, b"\x01"), "model": Model(name="m", at=dt.date(2026, 1, 2)),
        "unprintable": Unprintable(), "hostile": Hostile(), "type": int, 1: "int key",
        None: "none key", (1, 2): "tuple key", "surrogate\ud800": "\udfffx",
    }
    assert json_safe(value) == {
        "nan": "nan", "inf": "inf", "ninf": "-inf", "set": [1, 2, 3], "frozen": ["a", "b"],
        "tuple": [1, [2, 3]], "when": "2026-01-02T03:04:05+00:00", "day": "2026-01-02",
        "decimal": "1.10", "colour": "red", "size": 3, "point": {"x": 1, "y": "X'01'"},
        "model": {"name": "m", "at": "2026-01-02"}, "unprintable": "<Unprintable object>",
        "hostile": "hostile", "type": "<class 'int'>", "1": "int key", "null": "none key",
        "[1, 2]": "tuple key", "surrogate\ufffd": "\ufffdx",
    }
    assert type(json_safe(Size.BIG)) is int


def test_deep_nesting_cycles_and_shared_fan_out_are_cut():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    cut = json_safe(deep)
    for _ in range(40):
        cut = cut[0]
    assert cut == "… (nested more than 40 levels)"

    loop: dict = {"name": "loop"}
    loop["self"] = loop
    assert json_safe(loop) == {"name": "loop", "self": "… (refers to itself)"}

    shared: list = [1]
    for _ in range(30):  # 2**30 paths through 31 lists
        shared = [shared, shared]
    text = json.dumps(json_safe(shared), ensure_ascii=False)
    assert "…" in text and len(text) < 2_000_000


def test_plain_json_data_is_returned_unchanged():
    value = {"a": [1, 2.5, None, True, "中文"], "b": {"c": -0.0, "d": ""}}
    assert json_safe(value) == value and stored(json_safe(value)) == value


# ---- properties -------------------------------------------------------------------------

ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=20)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**62).map(lambda n: n**8),
    st.floats(), ANY_TEXT, st.binary(max_size=40), st.datetimes(), st.dates(),
    st.decimals(), st.sampled_from([Colour.RED, Size.BIG, object]), st.builds(Unprintable),
    st.builds(Hostile),
)
KEYS = st.one_of(ANY_TEXT, st.integers(), st.floats(), st.none(), st.booleans(),
                 st.tuples(st.integers()))
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.tuples(children, children),
        st.dictionaries(KEYS, children, max_size=4),
        st.frozensets(st.one_of(st.integers(), ANY_TEXT), max_size=4),
        st.builds(Point, st.integers(), st.binary(max_size=8)),
    ),
    max_leaves=30,
)


@FUZZ
@given(VALUES)
def test_any_value_becomes_storable_data_that_round_trips(value):
    safe = json_safe(value)
    assert stored(safe) == safe
    assert json_safe(safe) == safe  # already safe data is left as it is


# ---- through the registry and into a run -------------------------------------------------


def weird_engine() -> Engine:
    registry = ToolRegistry()

    def odd(kind: str) -> object:
        """Return something that is not JSON.

        Args:
            kind: which odd value.
        """
        product = 1
        for _ in range(8):
            product *= 9**999
        return {"blob": b"\x00\x01", "big": product, "nan": math.nan, "tags": {"b", "a"},
                "when": dt.date(2026, 1, 2), "text": "\ud800", "kind": kind}

    registry.add(make_tool(odd, read_only=True))
    return Engine(registry=registry, model=None)


def test_the_registry_returns_json_safe_results():
    result = weird_engine().registry.call("odd", {"kind": "x"})
    assert result["blob"] == "X'0001'" and result["tags"] == ["a", "b"]
    assert result["nan"] == "nan" and result["text"] == "\ufffd"
    assert stored(result) == result


def test_a_run_whose_tool_returns_odd_values_is_stored_and_completes():
    runner = Runner(RunStore(), poll_s=0.05)
    try:
        plan = Plan(goal="odd", steps=[
            Step(id="s1", description="odd values", tool="odd", args={"kind": "x"})])
        record = runner.wait(runner.start("odd", plan, engine=weird_engine()), timeout=10)
        assert record.status == "completed"
        result = record.plan.steps[0].result
        assert result["blob"] == "X'0001'" and result["big"].startswith("<an integer of")
        assert [e.kind for e in runner.store.events(record.run_id)][-1] == "run_finished"
    finally:
        runner.shutdown()
        runner.store.close()
