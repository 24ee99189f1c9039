"""Offline mode without an LLM: the rule-based planner and the answer composer.

The rules that read a request are in core/offline_text.py, matching a clause to a tool in
core/offline_match.py, the planner in core/offline_planner.py and the answers in
core/offline_answer.py.
"""

from core.planning.offline.answer import compose_answer
from core.planning.offline.planner import offline_plan

__all__ = ["compose_answer", "offline_plan"]
