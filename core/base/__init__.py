"""Shared leaf helpers: language, text forms, safe expressions, usage, the home folder."""
