"""The steps of a plan printed one by one while the planner writes them (``plan``)."""

from __future__ import annotations

from typing import TextIO

from core.cli.text import say
from core.plan.model import Step

__all__ = ["StepPrinter"]


class StepPrinter:
    """Prints each step of the reply being written once, as soon as it is complete.

    The lines go to ``out`` (the command passes stderr, so that the plan printed on stdout
    at the end stays the one result); a reply asked for again only adds the steps past
    those already printed: the plan printed at the end is the one to read.
    """

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.printed = 0

    def __call__(self, steps: list[Step]) -> None:
        for step in steps[self.printed:]:
            tool = f" [{step.tool}]" if step.tool else ""
            print(say("planning_step", step_id=step.id, description=step.description,
                      tool=tool), file=self.out, flush=True)
        self.printed = max(self.printed, len(steps))
