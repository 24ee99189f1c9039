"""The run store on SQLite and PostgreSQL: round trips, claims, errors, migrations, workflow
records."""
