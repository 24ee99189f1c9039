"""Property-based tests: conditions and the calculator end in a value or ExpressionError."""

from __future__ import annotations

import contextlib
import json
import math
import re

from hypothesis import given
from hypothesis import strategies as st

from core.base.expressions import (
    ExpressionError,
    calculate,
    condition_step_refs,
    evaluate_condition,
    is_expression_condition,
)
from tests.support.fuzzing import FUZZ

# any code point at all, lone surrogates and NUL included
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=300)
NUMBERS = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["pi", "e", "0", "9**999", "10**308", "1e308", "-1", "0.5", "1e-300"]),
)
FUNCTIONS = ("sqrt", "log", "log10", "exp", "sin", "abs", "round", "min", "max", "floor",
             "ceil", "pow", "__import__")
OPERATORS = ("+", "-", "*", "/", "//", "%", "**", "<<", "&", " and ")


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, st.sampled_from(OPERATORS), children).map(
            lambda t: f"({t[0]}{t[1]}{t[2]})"),
        children.map(lambda c: f"-{c}"),
        st.tuples(st.sampled_from(FUNCTIONS), st.lists(children, max_size=3)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})"),
    )


ARITHMETIC = st.recursive(NUMBERS, _combine, max_leaves=12)
CONDITION_TOKENS = st.lists(st.sampled_from([
    "not ", "(", ")", "s1", "s2", ".status", ".amount", "[0]", "['k']", " == ", " != ",
    " < ", " >= ", " in ", " not in ", " and ", " or ", "'delivered'", "120", "-", "None",
    "true", "[", "]", ", ", "1e999", "9" * 40, "'\ud800'", "\x00", "__class__", "x",
]), max_size=60).map("".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["status", "amount", "k", "items"]), children,
                      max_size=4),
    max_leaves=20,
)


def _check_number(value: object) -> None:
    assert isinstance(value, int | float) and not isinstance(value, bool)
    assert math.isfinite(value)
    json.dumps(value)  # storable: within the int-to-str digit limit
    if isinstance(value, int):
        assert value.bit_length() <= 10_000


@FUZZ
@given(ARITHMETIC)
def test_calculate_gives_a_finite_number_or_an_expression_error(expression):
    try:
        value = calculate(expression)
    except ExpressionError as exc:
        assert "\n" not in str(exc)
        return
    _check_number(value)


@FUZZ
@given(ANY_TEXT)
def test_calculate_survives_any_text(expression):
    with contextlib.suppress(ExpressionError):
        _check_number(calculate(expression))


@FUZZ
@given(st.one_of(CONDITION_TOKENS, ANY_TEXT), JSON_VALUES, JSON_VALUES)
def test_conditions_give_a_bool_or_an_expression_error(condition, first, second):
    is_expression_condition(condition)
    try:
        refs = condition_step_refs(condition)
        holds = evaluate_condition(condition, {"s1": first, "s2": second})
    except ExpressionError as exc:
        assert "\n" not in str(exc)
        return
    assert isinstance(holds, bool)
    assert all(re.fullmatch(r"s\d+", ref) for ref in refs)
