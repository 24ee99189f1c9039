"""The reason a checkpoint gives for a new version, in the language of the request.

The answer quotes that reason ("Plan adjusted: …"). A small model wrote its reasons in
English under Chinese requests, so a reason in the other language is replaced by what the
new version changed, told from the plans themselves.
"""

from __future__ import annotations

from core.base.language import Language, detect_language, pick
from core.plan.diff import diff_plans
from core.plan.model import Plan, Step

__all__ = ["reason_in_request_language"]


def reason_in_request_language(reason: str, old: Plan, new: Plan | None) -> str:
    """``reason`` when it is written in the request's language (or there is no new
    version); otherwise the steps the new version dropped, added and redefined."""
    lang = detect_language(old.goal)
    if new is None or (reason and detect_language(reason) == lang):
        return reason
    diff = diff_plans(old, new)
    parts = [
        _listed(lang, "去掉了", "dropped", diff.removed),
        _listed(lang, "新增了", "added", diff.added),
        _listed(lang, "修改了", "changed", [change.new for change in diff.changed
                                         if set(change.fields) != {"depends_on"}]),
    ]  # a step that lost a dropped dependency is not news
    told = pick(lang, "；", "; ").join(part for part in parts if part)
    return told or pick(lang, "计划没有变化", "the plan did not change")


def _listed(lang: Language, zh: str, en: str, steps: list[Step]) -> str:
    if not steps:
        return ""
    named = [pick(lang, f"{s.id}（{s.description}）", f"{s.id} ({s.description})")
             for s in steps]
    return pick(lang, zh + " " + "、".join(named), en + " " + ", ".join(named))
