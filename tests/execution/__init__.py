"""Executing a plan: the scheduler, executor, launcher, checkpoints, success checks and answers."""
