"""Plans as data: the Plan/Step model, parsing, validation, edits, diffs, the graph."""
