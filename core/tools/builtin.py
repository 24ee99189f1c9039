"""Built-in tools every PlanBoard has: a safe calculator and the current time."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator

from core.base.expressions import ComputationError, ExpressionError, NotArithmeticError
from core.base.expressions import calculate as safe_calculate
from core.base.messages import msg
from core.errors import ToolArgumentError, ToolExecutionError
from core.tools.registry import ToolRegistry, tool
from core.tools.tool_texts import BUILTIN_TEXTS_ZH, translated

__all__ = ["calculate", "get_current_time", "register_builtin_tools"]


def _arithmetic(expression: str) -> str:
    """The expression, when it is arithmetic; else why not. As a validator of the argument
    it is checked when a plan is validated too, so a step given code instead of arithmetic
    ("if(order['x'] == 'y', 1, 0)") is found before the run (the planner makes it a
    reasoning step). A value that cannot be computed (1 / 0) is the run's to report."""
    try:
        safe_calculate(expression)
    except ComputationError:
        return expression
    except ExpressionError as exc:
        raise NotArithmeticError(
            f"{exc}; calculate takes arithmetic only, such as 1999 * 0.9 + 15") from None
    return expression


Arithmetic = Annotated[str, AfterValidator(_arithmetic)]


@tool(read_only=True,
      keywords=("calculate", "compute", "sum", "total", "计算", "算", "合计", "总价"))
def calculate(expression: Arithmetic) -> dict:
    """Evaluate an arithmetic expression safely (numbers, + - * / // % **, sqrt, log, round ...).

    Args:
        expression: the arithmetic expression, for example "1999 * 0.9 + 15".
    """
    try:
        value = safe_calculate(expression)
    except ExpressionError as exc:
        raise ToolExecutionError(msg("tool.calculate_failed", error=str(exc))) from None
    return {"expression": expression, "value": value}


@tool(read_only=True,
      keywords=("time", "date", "today", "now", "时间", "日期", "今天", "现在"))
def get_current_time(timezone: str = "Asia/Shanghai") -> dict:
    """Return the current date and time in a time zone.

    Args:
        timezone: an IANA time zone name such as "Asia/Shanghai" or "Europe/London".
    """
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolArgumentError(msg("tool.unknown_time_zone", zone=repr(timezone))) from None
    return {"timezone": timezone, "iso": datetime.now(zone).isoformat(timespec="seconds")}


def register_builtin_tools(registry: ToolRegistry) -> None:
    """Add the built-in tools to ``registry``, with their descriptions in Chinese."""
    for builtin in (calculate, get_current_time):
        registry.add(translated(builtin, {"zh": BUILTIN_TEXTS_ZH[builtin.name]}))
