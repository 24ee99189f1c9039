"""Persistence of runs: schema, migrations, the run store and run ownership."""
