"""The `python -m core` command line."""
