"""Plans as data: the model, parsing, diffs, edits, graphs, versions, argument forms, approval."""
