"""Persistence of runs: schema, migrations, the run store and run ownership.

The face of the wing: the store and its records. Faces (pages/, ui/) never import it; they
read runs through :mod:`core.runs`.
"""

from core.store.run_store import PlanVersion, RunRecord, RunStore

__all__ = ["PlanVersion", "RunRecord", "RunStore"]
