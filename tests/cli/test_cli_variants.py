"""``plan "…" --variants N`` against the fake model server: one scripted reply per angle."""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from tests.support.cli import use_endpoint
from tests.support.variant_plans import PLANS, REQUEST, by_angle


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_three_variants_print_three_plans_with_their_figures(capsys, monkeypatch, fake_openai):
    use_endpoint(monkeypatch, fake_openai)
    fake_openai.responder = by_angle(PLANS)

    code, out, err = run_cli(capsys, "plan", REQUEST, "--variants", "3", "--json")

    assert code == 0, err
    variants = json.loads(out)["variants"]
    assert [v["variant"]["angles"] for v in variants] == [["parallel"], ["few_tools"], ["cheap"]]
    assert [[s["depends_on"] for s in v["steps"]] for v in variants] == [
        [[], [], ["s1"], ["s2", "s3"]], [[], [], ["s1"], ["s2", "s3"]],
        [[], ["s1"], ["s1", "s2"], ["s3"]]]
    assert variants[1]["steps"][1]["tool"] is None
    figures = [{key: v["variant"][key] for key in
                ("steps", "critical_path", "llm_calls", "side_effects")} for v in variants]
    assert figures == [
        {"steps": 4, "critical_path": 3, "llm_calls": 1, "side_effects": ["s3"]},
        {"steps": 4, "critical_path": 3, "llm_calls": 2, "side_effects": ["s3"]},
        {"steps": 4, "critical_path": 4, "llm_calls": 1, "side_effects": ["s3"]},
    ]
    # the reasoning step that names a policy is a problem, as in any single draft
    assert [len(v["variant"]["problems"]) for v in variants] == [0, 1, 0]
    assert "s2 is a reasoning step" in variants[1]["variant"]["problems"][0]
    assert len(fake_openai.chat_bodies) == 4  # one per angle, and the sent-back one again


def test_the_text_output_names_each_variant_and_its_figures(capsys, monkeypatch, fake_openai):
    use_endpoint(monkeypatch, fake_openai)
    fake_openai.responder = by_angle(PLANS)

    code, out, err = run_cli(capsys, "plan", REQUEST, "--variants", "2")

    assert code == 0, err
    assert ("Variant 1 (most parallel): 4 steps, critical path 3, about 1 LLM calls, side "
            "effects: s3") in out
    assert "Variant 2 (fewest tools): 4 steps, critical path 3, about 2 LLM calls" in out
    assert "  ✗ s2 is a reasoning step" in out
    assert "Variant 3" not in out


def test_variants_that_come_out_the_same_are_shown_once(capsys, monkeypatch, fake_openai):
    use_endpoint(monkeypatch, fake_openai)
    fake_openai.responder = by_angle({**PLANS, "cheap": PLANS["parallel"]})

    code, out, err = run_cli(capsys, "plan", REQUEST, "--variants", "3", "--json")

    assert code == 0, err
    printed = json.loads(out)
    assert [v["variant"]["angles"] for v in printed["variants"]] == [
        ["parallel", "cheap"], ["few_tools"]]
    assert printed["notes"] == ['The "cheapest in model calls" variant came out the same as '
                                'the "most parallel" one: shown once.']


def test_offline_variants_say_they_need_a_model_and_print_the_one_plan(capsys):
    code, out, err = run_cli(capsys, "plan", "Check order 88231", "--offline",
                             "--variants", "3")

    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Variants need a model")
    assert sum(line.startswith("Variant ") for line in lines) == 1
    assert "Look up order 88231" in out


@pytest.mark.parametrize("argv, says", [
    (("--variants", "4"), "--variants takes a number from 1 to 3, not 4"),
    (("--variants", "two"), "not two"),
    (("--variants", "2", "--rehearse"), "does not combine with --rehearse"),
    (("--variants", "2", "--mode", "direct"), "--mode direct answers without a plan"),
])
def test_a_bad_variants_request_is_one_line(capsys, argv, says):
    code, out, err = run_cli(capsys, "plan", "Check order 88231", "--offline", *argv)

    assert code == 1 and not out
    assert says in err and len(err.strip().splitlines()) == 1
