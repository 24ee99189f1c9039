"""Runs in the background: the runner, DBOS workflows, dispatch, workers, claims, recovery,
exports."""
