"""Safe evaluation of step conditions and calculator expressions, on Python's AST (never eval)."""

from __future__ import annotations

import ast
import math
import operator
import re
import threading
from typing import Any

from core.base.step_id import STEP_ID
from core.base.text import preview

__all__ = [
    "RESULT_STEP",
    "ComputationError",
    "ExpressionError",
    "NotArithmeticError",
    "calculate",
    "condition_step_refs",
    "criteria_condition",
    "evaluate_condition",
    "is_expression_condition",
    "parse_condition",
]

_EXPRESSION_HINT = re.compile(r"==|!=|<|>|\bs\d+\b")
_RESULT_NAME = re.compile(r"\bresult\b")
_CRITERIA_OPERATOR = re.compile(r"==|!=|<=|>=|<|>|\bin\b")
RESULT_STEP = "s0"
"""The step name that stands for ``result`` when success criteria are read as a condition."""
# CPython 3.11 counts the AST builder's recursion per interpreter, not per thread: two
# threads parsing at once (parallel steps, a planner beside a run, a library formatting a
# traceback) can fail with "SystemError: AST constructor recursion depth mismatch". Ours
# take turns, and a parse another thread's disturbed is done again. Parsing is microseconds.
_PARSING = threading.Lock()
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
_MATH_CONSTANTS = {"pi": math.pi, "e": math.e}
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_EXPRESSION_LENGTH = 2_000  # a column of 100 figures, summed, is ordinary input
_MAX_CONDITION_LENGTH = 2_000
# every walk below recurses once per level: a fixed depth keeps them far from the
# interpreter's recursion limit whatever the caller's own stack depth is. A chain of
# operators read left to right (1 + 2 + 3, 6 * 7 / 2) is one level: it is walked in a loop.
_MAX_DEPTH = 60
_MAX_EXPONENT = 1000
# 10,000 bits is about 3,000 digits: well under Python's 4,300-digit int-to-str limit,
# so every result can be printed and stored
_MAX_RESULT_BITS = 10_000
_MAX_ROUND_DIGITS = 3_000


class ExpressionError(ValueError):
    """Raised when an expression is malformed or uses something that is not allowed."""


class NotArithmeticError(ValueError):
    """A value that had to be arithmetic is something else (code, SQL): the step needs
    reasoning or another tool, and a model that wrote it tends to write it again."""


class ComputationError(ExpressionError):
    """A well-formed arithmetic expression whose value cannot be computed (1 / 0)."""


def is_expression_condition(text: str) -> bool:
    """Tell a machine-checkable condition (``s1.status == 'x'``) from one written in prose."""
    return bool(_EXPRESSION_HINT.search(text))


def criteria_condition(criteria: str) -> str | None:
    """Success criteria written as an expression over ``result`` (``result.count > 0``) as a
    condition over :data:`RESULT_STEP`; None for criteria in prose."""
    if not (_RESULT_NAME.search(criteria) and _CRITERIA_OPERATOR.search(criteria)):
        return None
    return _RESULT_NAME.sub(RESULT_STEP, criteria)


def parse_condition(text: str) -> ast.expr:
    """Parse a condition and check it uses only the allowed constructs."""
    tree = _parse(text, "condition", _MAX_CONDITION_LENGTH)
    for node in ast.walk(tree):
        _check_condition_node(node, text)
    return tree


def _parse(text: str, kind: str, max_length: int) -> ast.expr:
    """Parse ``text`` as one expression within length and nesting limits, or ExpressionError."""
    if not isinstance(text, str):
        raise ExpressionError(f"a {kind} must be text, not {type(text).__name__}")
    if len(text) > max_length:
        raise ExpressionError(f"{kind} is longer than {max_length} characters; shorten it")
    source = _SURROGATE.sub("\ufffd", text).strip()  # lone surrogates cannot be encoded
    try:
        tree = _parse_alone(source)
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse {kind} {_shown(text)}: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError):  # the parser's own nesting limits
        raise ExpressionError(_too_deep(kind, text)) from None
    _check_depth(tree.body, kind, text)
    return tree.body


def _parse_alone(source: str) -> ast.Expression:
    with _PARSING:
        try:
            return ast.parse(source, mode="eval")
        except SystemError:  # the shared recursion counter, moved by another thread
            return ast.parse(source, mode="eval")


def _check_depth(root: ast.AST, kind: str, text: str) -> None:
    """Refuse trees deeper than ``_MAX_DEPTH`` (walked without recursion); the left operand
    that continues a chain (:func:`_chain`) stays on its chain's level."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise ExpressionError(_too_deep(kind, text))
        left = getattr(node, "left", None)
        same_level = left if _chained(node) and _chained(left) else None
        stack.extend((child, depth if child is same_level else depth + 1)
                     for child in ast.iter_child_nodes(node))


def _too_deep(kind: str, text: str) -> str:
    return f"{kind} {_shown(text)} is nested more than {_MAX_DEPTH} levels deep; simplify it"


def _shown(text: str) -> str:
    return repr(preview(_SURROGATE.sub("\ufffd", text), 80))


def condition_step_refs(text: str) -> set[str]:
    """Return the step ids (``s1``...) a parsed condition reads."""
    return {
        node.id for node in ast.walk(parse_condition(text))
        if isinstance(node, ast.Name) and STEP_ID.match(node.id)
    }


def evaluate_condition(text: str, results: dict[str, Any]) -> bool:
    """Evaluate a condition over earlier step results; a missing field reads as None.

    A field of a text result is an ExpressionError, not None: a condition such as
    ``s2.value == 1`` over a reasoning step's sentence would otherwise be silently false,
    and the step it guards skipped unseen."""
    tree = parse_condition(text)
    try:
        return bool(_eval_condition(tree, results))
    except RecursionError:  # comparing absurdly deep results, not the condition itself
        raise ExpressionError(f"condition {_shown(text)} compares values nested too deeply") \
            from None


def _check_condition_node(node: ast.AST, text: str) -> None:
    allowed = (
        ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.Compare,
        ast.Constant, ast.Name, ast.Load, ast.Attribute, ast.Subscript, ast.List,
        ast.Tuple, *_COMPARATORS,
    )
    if not isinstance(node, allowed):
        raise ExpressionError(
            f"condition {_shown(text)} uses {type(node).__name__}, which is not allowed; "
            "use ==, !=, <, >, in, and, or, not, literals and sN.field"
        )
    if isinstance(node, ast.Name) and not (
        STEP_ID.match(node.id) or node.id in _LITERAL_NAMES
    ):
        raise ExpressionError(
            f"condition {_shown(text)} names {node.id!r}; refer to step results as sN.field"
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
    if isinstance(container, str):
        raise ExpressionError(f"cannot read {key!r} of the text {_shown(container)}: "
                              "a text result has no fields")
    if isinstance(container, dict):
        return container.get(key)
    if isinstance(container, (list, tuple)) and isinstance(key, int):
        return container[key] if -len(container) <= key < len(container) else None
    return None


def calculate(expression: str) -> int | float:
    """Evaluate an arithmetic expression with + - * / // % **, parentheses and math functions."""
    tree = _parse(expression, "expression", _MAX_EXPRESSION_LENGTH)
    try:
        return _eval_arithmetic(tree)
    except ExpressionError:
        raise
    except ZeroDivisionError:
        raise ComputationError(f"division by zero in {_shown(expression)}") from None
    except (OverflowError, ValueError, TypeError) as exc:
        raise ComputationError(f"cannot compute {_shown(expression)}: {exc}") from None


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


def _round(number: int | float, ndigits: int | None = None) -> int | float:
    """``round``, refusing a digit count whose power of ten would take forever to build."""
    if isinstance(ndigits, int) and abs(ndigits) > _MAX_ROUND_DIGITS:
        raise ExpressionError(
            f"round to {ndigits} digits is out of range (limit {_MAX_ROUND_DIGITS})"
        )
    return round(number, ndigits)


_MATH_FUNCTIONS = {
    "sqrt": math.sqrt, "log": math.log, "log10": math.log10, "exp": math.exp,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "abs": abs, "round": _round,
    "min": min, "max": max, "floor": math.floor, "ceil": math.ceil,
}


def _bounded(value: Any) -> int | float:
    """Every intermediate result: a finite real number of at most ``_MAX_RESULT_BITS`` bits."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > _MAX_RESULT_BITS:
            raise ExpressionError(
                f"an intermediate result has more than {_MAX_RESULT_BITS * 3 // 10:,} digits "
                "(too large); use smaller numbers"
            )
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExpressionError("the result is too large or not a number (inf or nan)")
        return value
    raise ExpressionError("the result is not a real number; check roots of negative numbers")


def _chained(node: object) -> bool:
    """An arithmetic operation read left to right (``**`` groups to the right)."""
    return (isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC
            and not isinstance(node.op, ast.Pow))


def _chain(node: ast.BinOp) -> tuple[ast.expr, list[tuple[ast.operator, ast.expr]]]:
    """``a + b - c`` as its first operand and the operations after it, in order."""
    links: list[tuple[ast.operator, ast.expr]] = [(node.op, node.right)]
    first = node.left
    while _chained(node) and _chained(first):
        node = first  # type: ignore[assignment]  # _chained: a BinOp
        links.append((node.op, node.right))
        first = node.left
    return first, links[::-1]


def _eval_arithmetic(node: ast.expr) -> int | float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(
        node.value, bool
    ):
        return _bounded(node.value)
    if isinstance(node, ast.Name) and node.id in _MATH_CONSTANTS:
        return _MATH_CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval_arithmetic(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        first, links = _chain(node)
        value = _eval_arithmetic(first)
        for op, operand in links:
            right = _eval_arithmetic(operand)
            if isinstance(op, ast.Pow):
                _check_power(value, right)
            value = _bounded(_ARITHMETIC[type(op)](value, right))
        return value
    if (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and node.func.id in _MATH_FUNCTIONS and not node.keywords
    ):
        arguments = [_eval_arithmetic(a) for a in node.args]
        return _bounded(_MATH_FUNCTIONS[node.func.id](*arguments))
    raise ExpressionError(
        f"{preview(ast.unparse(node), 80)!r} is not allowed; use numbers, + - * / // % **, "
        f"parentheses and {', '.join(sorted(_MATH_FUNCTIONS))}"
    )
