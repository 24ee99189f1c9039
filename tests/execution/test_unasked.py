"""What a run's options let run without asking a person (core.execution.options.runs_unasked)."""

from __future__ import annotations

from core.execution.options import RunOptions, runs_unasked


def test_the_default_options_ask_before_anything_with_an_effect():
    assert runs_unasked(RunOptions().model_dump()) == []
    assert runs_unasked({}) == []  # a run stored before these options existed asks too


def test_each_widening_option_is_named():
    options = RunOptions(confirm_side_effects=False, new_versions="approve",
                         read_ahead={"k": {"result": 1, "read_at": 0, "version": 1}})
    assert runs_unasked(options.model_dump()) == ["side_effects", "new_versions", "read_ahead"]


def test_refusing_new_versions_lets_nothing_more_run():
    assert runs_unasked(RunOptions(new_versions="refuse").model_dump()) == []
