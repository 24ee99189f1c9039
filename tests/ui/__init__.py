"""AppTests: one file per page of the dashboard, started from app.py, widgets found by key."""
