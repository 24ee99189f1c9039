"""Benchmarks that print tables of ratios (run with ``python -m bench``)."""
