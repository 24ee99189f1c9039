"""Prompt text of plan variants: the angle each variant of a request is planned from."""

from __future__ import annotations

from string import Template
from typing import Literal

__all__ = ["ANGLES", "ANGLE_TEMPLATE", "Angle"]

Angle = Literal["parallel", "few_tools", "cheap"]

ANGLES: dict[Angle, str] = {
    "parallel": (
        "Make the steps as parallel as the work allows: steps that do not need each "
        "other's results must not depend on each other, so that the longest chain of "
        "dependencies is as short as possible."),
    "few_tools": (
        "Use as few different tools and as few steps as the request allows: combine work "
        "where one call can do it and leave out every step the answer does not need."),
    "cheap": (
        "Make the plan cheap in model calls: prefer tool steps whose arguments are all "
        "given (they run without a model) over reasoning steps, and keep a single final "
        "step that writes the answer."),
}

ANGLE_TEMPLATE = Template("""\
This plan is one of several alternatives shown side by side, each planned from its own \
angle. Plan it from this angle, still serving the whole request:
$angle""")
