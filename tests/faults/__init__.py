"""Fault trials: real processes killed, racing, cut off from their database or their files."""
