"""AppTests: one file per page of the dashboard, started from dashboard.py, widgets found by key."""
