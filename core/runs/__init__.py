"""Runs end to end: starting and steering them, recovery, plan-less answers, exports."""
