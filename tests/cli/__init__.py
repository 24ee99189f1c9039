"""The python -m core command line end to end."""
