"""Plans as data: the Plan/Step model, parsing, validation, edits, diffs, the graph.

The face of the wing: what the rest of PlanBoard needs about plans. Modules inside core
import the defining module directly (``core.plan.model``), so that the wing's own modules
never wait on this file.
"""

from core.plan.approval import widening
from core.plan.diff import PlanDiff, diff_plans, format_diff
from core.plan.graph import plan_to_dot
from core.plan.model import Plan, Step
from core.plan.parse import parse_plan

__all__ = ["Plan", "PlanDiff", "Step", "diff_plans", "format_diff", "parse_plan", "plan_to_dot",
           "widening"]
