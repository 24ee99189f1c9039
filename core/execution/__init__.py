"""Doing it: options, step context, executor, ReAct, success checks, the scheduler."""
