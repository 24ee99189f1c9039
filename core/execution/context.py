"""What a step sees: its resolved ``{{sN.field}}`` arguments and a folded context of its inputs."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from pydantic import BaseModel, Field

from core.base.messages import Message, msg
from core.errors import ToolArgumentError
from core.plan.dag import ancestors
from core.plan.model import REFERENCE, WHOLE_REFERENCE, Plan, Step
from core.planning.offline import offline_answer
from core.tools.registry import ToolRegistry

__all__ = [
    "DEFAULT_CONTEXT_BUDGET",
    "TRUNCATION_MARKER",
    "ArgumentSent",
    "arguments_sent",
    "build_step_context",
    "context_step_ids",
    "fallback_answer",
    "fold_texts",
    "reference_path",
    "render_value",
    "resolve_args",
    "resolve_value",
    "summarize_results",
]

logger = logging.getLogger(__name__)

DEFAULT_CONTEXT_BUDGET = 6000
TRUNCATION_MARKER = "… [truncated {dropped} chars]"
_MIN_RESULT_CHARS = 200
_MAX_GOAL_CHARS = 1500
_PATH_PART = re.compile(r"\.([\w\-]+)|\[(\d+)\]")


# ---- references ---------------------------------------------------------------------------


def resolve_args(args: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
    """Replace every ``{{sN...}}`` reference in ``args`` by the value it names.

    A value that is exactly one reference keeps the referenced value's type; a reference
    embedded in longer text is stringified. A reference that cannot be resolved raises
    ToolArgumentError naming the argument and the reference.
    """
    resolved: dict[str, Any] = {}
    for key, value in args.items():
        try:
            resolved[key] = resolve_value(value, results)
        except ToolArgumentError as exc:
            raise ToolArgumentError(msg("ref.in_argument", name=repr(key),
                                        error=exc.message or str(exc))) from None
    return resolved


def resolve_value(value: Any, results: dict[str, Any]) -> Any:
    """Resolve references inside one argument value (strings, lists and dicts, recursively)."""
    if isinstance(value, dict):
        return {k: resolve_value(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_value(v, results) for v in value]
    if not isinstance(value, str) or "{{" not in value:
        return value
    whole = WHOLE_REFERENCE.match(value)
    if whole:
        return _lookup(whole.group(1), whole.group(2), results, whole.group(0).strip())
    return REFERENCE.sub(
        lambda m: _stringify(_lookup(m.group(1), m.group(2), results, m.group(0))), value
    )


class ArgumentSent(BaseModel):
    """One argument of a step as its tool will get it: what a person confirms.

    ``value`` has its references resolved (``42`` for ``{{s1.user_id}}``) and
    ``sources`` names the results it reads (``s1.user_id``; ``s1`` for a whole result).
    ``problem`` says why a reference cannot be resolved yet (``value`` is then as the plan
    wrote it); ``by_model``: a required argument the plan leaves out, which the model
    writes when the step runs (``value`` None).
    """

    name: str
    value: Any = None
    sources: list[str] = Field(default_factory=list)
    problem: Message | None = None
    by_model: bool = False


def arguments_sent(plan: Plan, step: Step, registry: ToolRegistry | None = None
                   ) -> list[ArgumentSent]:
    """``step``'s arguments as its tool will get them, resolved from ``plan``'s results as
    the executor resolves them (:func:`resolve_args`), in the plan's order; with
    ``registry``, then the required arguments of its tool that the plan leaves to the model.

    The dashboard's confirmation card and the command line's prompt both show these, so
    what a person confirms is what runs.
    """
    results = plan.results()
    sent: list[ArgumentSent] = []
    for name, raw in (step.args or {}).items():
        sources = _sources(raw)
        try:
            sent.append(ArgumentSent(name=name, value=resolve_value(raw, results),
                                     sources=sources))
        except ToolArgumentError as exc:
            sent.append(ArgumentSent(name=name, value=raw, sources=sources,
                                     problem=exc.message or msg("tool.reported", text=str(exc))))
    if registry is not None and step.tool in registry:
        given = {name for name, value in (step.args or {}).items() if value is not None}
        sent += [ArgumentSent(name=name, by_model=True)
                 for name in registry.get(step.tool).required if name not in given]
    return sent


def _sources(value: Any) -> list[str]:
    """The results a raw argument value reads, as ``s1.user_id`` (in order, once each)."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return list(dict.fromkeys(source for item in value for source in _sources(item)))
    if not isinstance(value, str):
        return []
    return list(dict.fromkeys(m.group(1) + m.group(2) for m in REFERENCE.finditer(value)))


def reference_path(path: str) -> list[str | int]:
    """The fields and list positions of a reference's path (``.order.items[0]``), in order."""
    return [field or int(index) for field, index in _PATH_PART.findall(path)]


def _lookup(step_id: str, path: str, results: dict[str, Any], text: str) -> Any:
    if step_id not in results:
        raise ToolArgumentError(msg("ref.no_result", reference=text, step=step_id))
    current = results[step_id]
    walked = step_id
    for part in reference_path(path):
        current = _as_structure(current)
        if isinstance(part, str):
            if not isinstance(current, dict) or part not in current:
                raise ToolArgumentError(msg("ref.no_field", reference=text, walked=walked,
                                            field=repr(part), known=_known_fields(current)))
            current = current[part]
            walked += f".{part}"
        else:
            if not isinstance(current, list) or part >= len(current):
                raise ToolArgumentError(msg("ref.no_item", reference=text, walked=walked,
                                            position=part))
            current = current[part]
            walked += f"[{part}]"
    return current


def _as_structure(value: Any) -> Any:
    """A result written as JSON text (common for LLM steps) is read as the structure it holds."""
    if isinstance(value, str) and value.strip()[:1] in {"{", "["}:
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _known_fields(value: Any) -> Message:
    if isinstance(value, dict) and value:
        return msg("ref.known_fields", fields=", ".join(map(str, value)))
    return msg("ref.not_an_object", kind=type(value).__name__)


def _stringify(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


# ---- context --------------------------------------------------------------------------------


def render_value(value: Any) -> str:
    """A result as compact text for a prompt (JSON for structures, as-is for text)."""
    if value is None:
        return "null"
    return _stringify(value)


def context_step_ids(plan: Plan, step: Step) -> list[str]:
    """Ids of the steps whose results a step sees.

    Its direct dependencies; the synthesis step sees every step it depends on directly or
    indirectly (every other step when it declares no dependencies), since it answers the goal.
    """
    synthesis = plan.synthesis_step()
    if synthesis is None or synthesis.id != step.id:
        return [dep for dep in step.depends_on if dep in plan.ids()]
    if not step.depends_on:
        return [s.id for s in plan.steps if s.id != step.id]
    upstream = set(ancestors({s.id: s.depends_on for s in plan.steps}, step.depends_on))
    return [s.id for s in plan.steps if s.id in upstream]


def fold_texts(texts: dict[str, str], budget: int) -> dict[str, str]:
    """Cut the longest texts first until their total length fits ``budget``.

    Every text over a common cap is truncated to that cap (with a marker saying how much
    was dropped), so short results stay whole and long ones share what is left.
    """
    if sum(len(t) for t in texts.values()) <= budget or not texts:
        return dict(texts)
    lengths = sorted(len(t) for t in texts.values())
    cap, remaining, count = 0, budget, len(lengths)
    for length in lengths:
        share = remaining // count
        if length <= share:
            remaining -= length
            count -= 1
            continue
        cap = share
        break
    cap = max(cap, _MIN_RESULT_CHARS)
    return {key: _truncate(text, cap) for key, text in texts.items()}


def _truncate(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    marker = TRUNCATION_MARKER.format(dropped=len(text) - cap)
    keep = max(cap - len(marker), 0)
    return text[:keep] + TRUNCATION_MARKER.format(dropped=len(text) - keep)


def build_step_context(plan: Plan, step: Step, *, budget: int = DEFAULT_CONTEXT_BUDGET) -> str:
    """The goal, the definition of done, the step and its inputs' results, within ``budget``.

    Never the whole history: only the steps named by :func:`context_step_ids` appear, and
    their results are folded (largest first) so the text stays near ``budget`` characters.
    """
    header = [f"Goal: {_truncate(plan.goal, _MAX_GOAL_CHARS)}"]
    if plan.definition_of_done:
        header.append(f"Definition of done: {_truncate(plan.definition_of_done, 500)}")
    if plan.constraints:
        header.append("Constraints: " + "; ".join(plan.constraints))
    header.append(f"Current step {step.id}: {step.description}")
    if step.success_criteria:
        header.append(f"Success criteria: {step.success_criteria}")
    if step.tool:
        header.append(f"Tool of this step: {step.tool}")
    head = "\n".join(header)

    lines: dict[str, str] = {}
    notes: list[str] = []
    for dep_id in context_step_ids(plan, step):
        dep = plan.step(dep_id)
        if dep.status == "completed":
            lines[dep_id] = render_value(dep.result)
        elif dep.status in {"skipped", "failed"}:
            notes.append(f"- {dep_id} ({dep.description}): {dep.status} — {dep.error or ''}")
    labels = {dep_id: f"- {dep_id} ({plan.step(dep_id).description}): " for dep_id in lines}
    fixed = len(head) + sum(len(n) + 1 for n in notes) + sum(len(v) + 1 for v in labels.values())
    folded = fold_texts(lines, max(budget - fixed - 60, _MIN_RESULT_CHARS * max(len(lines), 1)))
    body = [labels[key] + folded[key] for key in lines] + notes
    if not body:
        return head + "\nResults of earlier steps: none."
    return head + "\nResults of the steps it depends on:\n" + "\n".join(body)


def summarize_results(plan: Plan, *, budget: int = DEFAULT_CONTEXT_BUDGET) -> str:
    """A plain answer built from the completed steps' results (when no model can write one)."""
    synthesis = plan.synthesis_step()
    texts = {
        s.id: render_value(s.result)
        for s in plan.steps
        if s.status == "completed" and (synthesis is None or s.id != synthesis.id)
    }
    folded = fold_texts(texts, budget)
    return "\n".join(f"{plan.step(sid).description}: {folded[sid]}" for sid in texts)


def fallback_answer(plan: Plan, registry: ToolRegistry) -> str:
    """The answer without a model: a pack's composition of the results, else the plain
    summary."""
    try:
        composed = offline_answer(plan, registry)
    except Exception:  # a pack's composer bug: a plain list still answers
        logger.warning("the pack's offline answer failed; using the plain summary",
                       exc_info=True)
        composed = None
    return composed or summarize_results(plan)
