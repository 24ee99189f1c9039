"""Tests of the safe condition and calculator evaluators (they must never run Python code)."""

from __future__ import annotations

import math

import pytest

from core.base.expressions import (
    ExpressionError,
    calculate,
    condition_step_refs,
    evaluate_condition,
    is_expression_condition,
)

RESULTS = {
    "s1": {"status": "delivered", "amount": 120, "items": ["a", "b"], "nested": {"ok": True}},
    "s2": "plain text",
    "s3": [10, 20],
}


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("s1.status == 'delivered'", True),
        ("s1.status != 'delivered'", False),
        ("s1.amount > 100 and s1.amount <= 120", True),
        ("s1.amount < 100 or s1.status == 'delivered'", True),
        ("not s1.nested.ok", False),
        ("'a' in s1.items", True),
        ("'z' not in s1.items", True),
        ("s1['status'] == 'delivered'", True),
        ("s3[1] == 20", True),
        ("s3[-1] == 20", True),
        ("s3[5] == None", True),
        ("s2 == 'plain text'", True),
        ("s1.nested.ok == true", True),
        ("s1.status in ['delivered', 'signed']", True),
        ("s1.amount == -120", False),
        ("1 < s1.amount < 200", True),
    ],
)
def test_conditions(condition, expected):
    assert evaluate_condition(condition, RESULTS) is expected


@pytest.mark.parametrize(
    "condition",
    [
        "s1.missing == 'x'",        # a missing field reads as None
        "s9.status == 'delivered'",  # a step without a result reads as None
        "s1.missing > 3",            # None > 3 is simply false, not a TypeError
        "s2.field == 1",             # a field of a string is None
    ],
)
def test_missing_fields_are_false_not_errors(condition):
    assert evaluate_condition(condition, RESULTS) is False


def test_missing_field_equals_none():
    assert evaluate_condition("s1.missing == None", RESULTS) is True


@pytest.mark.parametrize(
    "condition",
    [
        "__import__('os').system('echo hi')",
        "s1.status.upper() == 'X'",
        "open('/etc/passwd')",
        "x == 1",
        "s1.amount + 1 > 2",
        "lambda: 1",
        "[c for c in s1.items]",
        "s1.status == (",
    ],
)
def test_forbidden_or_malformed_conditions_raise(condition):
    with pytest.raises(ExpressionError):
        evaluate_condition(condition, RESULTS)


def test_condition_step_refs():
    assert condition_step_refs("s1.a == 1 and s12.b in ['x'] or not s3") == {"s1", "s12", "s3"}


def test_prose_and_expression_conditions_are_told_apart():
    assert is_expression_condition("s2.status == 'delivered'")
    assert is_expression_condition("s1.total > 100")
    assert not is_expression_condition("only if the user asked for a refund")


# ---- calculator ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("1999 * 0.9 + 15", 1999 * 0.9 + 15),
        ("7 // 2", 3),
        ("7 % 4", 3),
        ("2 ** 10", 1024),
        ("-3 + +4", 1),
        ("sqrt(16)", 4.0),
        ("round(2.567, 2)", 2.57),
        ("max(1, 5, 3)", 5),
        ("pi * 2", math.pi * 2),
        ("abs(-4)", 4),
        ("  10 / 4 ", 2.5),
    ],
)
def test_calculator(expression, expected):
    assert calculate(expression) == pytest.approx(expected)


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('rm -rf /')",
        "().__class__.__bases__[0].__subclasses__()",
        "(1).__class__",
        "pi.real",
        "lambda: 1",
        "[x for x in range(10)]",
        "{'a': 1}",
        "'abc' * 3",
        "open('/etc/passwd').read()",
        "exec('1')",
        "eval('1+1')",
        "x + 1",
        "sqrt(x=4)",
        "True + 1",
        "1 if 1 else 2",
        "(y := 3)",
    ],
)
def test_calculator_rejects_injection_attempts(expression):
    with pytest.raises(ExpressionError, match="not allowed"):
        calculate(expression)


def test_calculator_limits_huge_exponents():
    with pytest.raises(ExpressionError, match="exponent 100000 is too large"):
        calculate("9 ** 100000")
    with pytest.raises(ExpressionError, match="too large"):
        calculate("2 ** (10 ** 4)")


def test_calculator_limits_expression_length():
    with pytest.raises(ExpressionError, match="longer than 500 characters"):
        calculate("1+" * 300 + "1")


def test_calculator_reports_arithmetic_problems():
    with pytest.raises(ExpressionError, match="division by zero"):
        calculate("1 / 0")
    with pytest.raises(ExpressionError, match="cannot compute"):
        calculate("sqrt(-1)")
    with pytest.raises(ExpressionError, match="cannot parse"):
        calculate("1 +")


# ---- limits and odd inputs -----------------------------------------------------------


def test_calculator_limits_the_size_of_a_power_result():
    with pytest.raises(ExpressionError, match="too large"):
        calculate("(10 ** 999) ** 999")


def test_calculator_reports_wrong_argument_counts():
    with pytest.raises(ExpressionError):
        calculate("sqrt(1, 2)")


def test_negated_missing_field_is_false():
    assert evaluate_condition("-s1.missing > 0", {"s1": {}}) is False
