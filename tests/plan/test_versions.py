"""Plan versions: one renumbering for replans, checkpoints and follow-ups; retiring steps."""

from core.plan.model import Plan, Step
from core.plan.versions import renumber, retire


def test_renumber_renames_the_step_and_every_reference_to_another_step():
    step = Step(id="s2", description="refund", tool="apply_refund",
                args={"order_id": "{{s1.order_id}}", "notes": ["{{ s1 }}", "s1 stays"]},
                depends_on=["s1", "s1"], condition="s1.status == 's1'")
    renamed = renumber(step, {"s1": "s7", "s2": "s8"})
    assert renamed.id == "s8" and renamed.depends_on == ["s7"]
    assert renamed.args == {"order_id": "{{s7.order_id}}", "notes": ["{{ s7 }}", "s1 stays"]}
    assert renamed.condition == "s7.status == 's1'"
    assert step.id == "s2" and step.args["order_id"] == "{{s1.order_id}}"  # a copy


def test_retire_skips_the_pending_steps_a_new_version_dropped():
    kept = Step(id="s1", description="kept")
    dropped = Step(id="s2", description="dropped")
    old = Plan(goal="g", steps=[kept, dropped])
    new = Plan(goal="g", version=2, steps=[kept, Step(id="s3", description="new")])
    retire(old, new)
    assert (kept.status, dropped.status) == ("pending", "skipped")
    assert dropped.error == "replaced by plan version 2"
