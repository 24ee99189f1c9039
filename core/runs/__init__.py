"""Runs end to end: starting and steering them, recovery, plan-less answers, exports.

The faces own their :class:`Runner`: the dashboard and each CLI command open one with
:func:`open_runner` and close it; how runs are executed and recovered stays inside.
"""

from core.runs.runner import Runner, open_runner

__all__ = ["Runner", "open_runner"]
