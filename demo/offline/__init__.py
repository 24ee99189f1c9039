"""The demo's offline mode: the rule planner for its requests and the answers from its results.

The demo pack offers both to the engine (demo.pack): ``offline_plan`` drafts plans with no
model (and is the reference the engine's rule-reading repairs compare a model's plan with),
``compose_answer`` writes the answer from the results. How a request is read is in
demo.offline.text, filling a tool's arguments in demo.offline.match.
"""

from demo.offline.answer import compose_answer
from demo.offline.planner import offline_plan

__all__ = ["compose_answer", "offline_plan"]
