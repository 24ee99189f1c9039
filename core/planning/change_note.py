"""The reason a checkpoint gives for a new version, in the language of the request.

The answer quotes that reason ("Plan adjusted: …"). A small model wrote its reasons in
English under Chinese requests, so a reason in the other language is replaced by what the
new version changed, told from the plans themselves. It makes up for weak models, so it
runs where their workarounds do (core.llm.providers.weak_model_checks).
"""

from __future__ import annotations

from core.base.language import Language, written_in
from core.base.messages import joined, msg, render
from core.plan.diff import diff_plans
from core.plan.model import Plan, Step

__all__ = ["reason_in_request_language"]


def reason_in_request_language(reason: str, old: Plan, new: Plan | None) -> str:
    """``reason`` when it is written in the request's language (or there is no new
    version); otherwise the steps the new version dropped, added and redefined."""
    lang = old.language
    if new is None or (reason and written_in(reason, lang)):
        return reason
    diff = diff_plans(old, new)
    redefined = [change.new for change in diff.changed
                 if set(change.fields) != {"depends_on"}]  # a lost dropped dependency is no news
    parts = [_listed(code, steps, lang) for code, steps in (
        ("change.dropped", diff.removed), ("change.added", diff.added),
        ("change.changed", redefined)) if steps]
    return joined(parts, lang, parts=True) or render(msg("change.none"), lang)


def _listed(code: str, steps: list[Step], lang: Language) -> str:
    named = [render(msg("change.step", step=s.id, description=s.description), lang)
             for s in steps]
    return render(msg(code, steps=joined(named, lang)), lang)
