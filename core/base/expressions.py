"""Safe evaluation of step conditions and calculator expressions, on Python's AST (never eval)."""

from __future__ import annotations

import ast
import math
import operator
import re
from typing import Any

__all__ = [
    "ExpressionError",
    "calculate",
    "condition_step_refs",
    "evaluate_condition",
    "is_expression_condition",
    "parse_condition",
]

_STEP_NAME = re.compile(r"^s\d+$")
_EXPRESSION_HINT = re.compile(r"==|!=|<|>|\bs\d+\b")
_LITERAL_NAMES = {"true": True, "false": False, "null": None, "True": True,
                  "False": False, "None": None}
_COMPARATORS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_ARITHMETIC = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_MATH_FUNCTIONS = {
    "sqrt": math.sqrt, "log": math.log, "log10": math.log10, "exp": math.exp,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "abs": abs, "round": round,
    "min": min, "max": max, "floor": math.floor, "ceil": math.ceil,
}
_MATH_CONSTANTS = {"pi": math.pi, "e": math.e}
_MAX_EXPRESSION_LENGTH = 500
_MAX_EXPONENT = 1000
_MAX_RESULT_BITS = 10_000


class ExpressionError(ValueError):
    """Raised when an expression is malformed or uses something that is not allowed."""


def is_expression_condition(text: str) -> bool:
    """Tell a machine-checkable condition (``s1.status == 'x'``) from one written in prose."""
    return bool(_EXPRESSION_HINT.search(text))


def parse_condition(text: str) -> ast.expr:
    """Parse a condition and check it uses only the allowed constructs."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse condition {text!r}: {exc.msg}") from None
    for node in ast.walk(tree.body):
        _check_condition_node(node, text)
    return tree.body


def condition_step_refs(text: str) -> set[str]:
    """Return the step ids (``s1``...) a parsed condition reads."""
    return {
        node.id for node in ast.walk(parse_condition(text))
        if isinstance(node, ast.Name) and _STEP_NAME.match(node.id)
    }


def evaluate_condition(text: str, results: dict[str, Any]) -> bool:
    """Evaluate a condition over earlier step results; a missing field reads as None."""
    return bool(_eval_condition(parse_condition(text), results))


def _check_condition_node(node: ast.AST, text: str) -> None:
    allowed = (
        ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.Compare,
        ast.Constant, ast.Name, ast.Load, ast.Attribute, ast.Subscript, ast.List,
        ast.Tuple, *_COMPARATORS,
    )
    if not isinstance(node, allowed):
        raise ExpressionError(
            f"condition {text!r} uses {type(node).__name__}, which is not allowed; "
            "use ==, !=, <, >, in, and, or, not, literals and sN.field"
        )
    if isinstance(node, ast.Name) and not (
        _STEP_NAME.match(node.id) or node.id in _LITERAL_NAMES
    ):
        raise ExpressionError(
            f"condition {text!r} names {node.id!r}; refer to step results as sN.field"
        )


def _eval_condition(node: ast.expr, results: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in _LITERAL_NAMES:
            return _LITERAL_NAMES[node.id]
        return results.get(node.id)
    if isinstance(node, ast.Attribute):
        return _field(_eval_condition(node.value, results), node.attr)
    if isinstance(node, ast.Subscript):
        return _field(_eval_condition(node.value, results), _eval_condition(node.slice, results))
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval_condition(item, results) for item in node.elts]
    if isinstance(node, ast.BoolOp):
        values = (_eval_condition(v, results) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp):
        value = _eval_condition(node.operand, results)
        if isinstance(node.op, ast.Not):
            return not value
        return -value if isinstance(value, (int, float)) else None
    if isinstance(node, ast.Compare):
        return _compare(node, results)
    raise ExpressionError(f"unsupported construct {type(node).__name__}")


def _compare(node: ast.Compare, results: dict[str, Any]) -> bool:
    left = _eval_condition(node.left, results)
    for op, comparator in zip(node.ops, node.comparators, strict=True):
        right = _eval_condition(comparator, results)
        try:
            if not _COMPARATORS[type(op)](left, right):
                return False
        except TypeError:
            return False  # comparing a missing field (None) with a number is simply false
        left = right
    return True


def _field(container: Any, key: Any) -> Any:
    if isinstance(container, dict):
        return container.get(key)
    if isinstance(container, (list, tuple)) and isinstance(key, int):
        return container[key] if -len(container) <= key < len(container) else None
    return None


def calculate(expression: str) -> int | float:
    """Evaluate an arithmetic expression with + - * / // % **, parentheses and math functions."""
    if len(expression) > _MAX_EXPRESSION_LENGTH:
        raise ExpressionError(
            f"expression is longer than {_MAX_EXPRESSION_LENGTH} characters; shorten it"
        )
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse expression {expression!r}: {exc.msg}") from None
    try:
        return _eval_arithmetic(tree.body)
    except ExpressionError:
        raise
    except ZeroDivisionError:
        raise ExpressionError(f"division by zero in {expression!r}") from None
    except (OverflowError, ValueError, TypeError) as exc:
        raise ExpressionError(f"cannot compute {expression!r}: {exc}") from None


def _check_power(base: int | float, exponent: int | float) -> None:
    """Refuse powers whose result would be astronomically large (they hang the process)."""
    if abs(exponent) > _MAX_EXPONENT:
        raise ExpressionError(f"exponent {exponent} is too large (limit {_MAX_EXPONENT})")
    if (
        isinstance(base, int) and isinstance(exponent, int)
        and base.bit_length() * abs(exponent) > _MAX_RESULT_BITS
    ):
        raise ExpressionError(
            f"{base} ** {exponent} is too large (too many digits); use smaller numbers"
        )


def _eval_arithmetic(node: ast.expr) -> int | float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(
        node.value, bool
    ):
        return node.value
    if isinstance(node, ast.Name) and node.id in _MATH_CONSTANTS:
        return _MATH_CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval_arithmetic(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _eval_arithmetic(node.left), _eval_arithmetic(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        return _ARITHMETIC[type(node.op)](left, right)
    if (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and node.func.id in _MATH_FUNCTIONS and not node.keywords
    ):
        return _MATH_FUNCTIONS[node.func.id](*(_eval_arithmetic(a) for a in node.args))
    raise ExpressionError(
        f"{ast.unparse(node)!r} is not allowed; use numbers, + - * / // % **, parentheses "
        f"and {', '.join(sorted(_MATH_FUNCTIONS))}"
    )
