"""Lessons and reflections."""
