"""The demo's offline answer: a readable answer, in the request's language, from the results."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from core.base.language import Language, detect_language, written_in
from core.base.messages import render
from core.base.text import clip_words, preview
from core.plan.model import Plan, Step
from demo.messages import in_language
from demo.offline.answer_ops import (
    diagnose_section,
    health_section,
    scale_section,
    services_section,
)
from demo.offline.answer_text import (
    CARRIERS_EN,
    bilingual_half,
    english_names,
    markdown_table,
    table_lines,
)
from demo.offline.text import PERIOD_PREFIX

__all__ = ["compose_answer"]

_ROWS_SHOWN = 12
_PREVIEW = 300
_LINE_CHARS = 400
_PRODUCT_LINE = re.compile(r"^\s*[-*]\s*\*\*(?P<name>[^*]+)\*\*[:：]?\s*(?P<why>.*)$", re.M)
_PRICE = re.compile(r"[¥￥]\s*(\d+(?:\.\d+)?)")
_CHURN_ADVICE = {
    "price": ("推出年付折扣或为老用户保留原价", "offer annual discounts or keep the old price for "
              "existing users", "价格"),
    "missing_feature": ("把呼声最高的缺失功能排进路线图", "put the most requested missing "
                        "features on the roadmap", "缺少功能"),
    "bugs": ("优先修复稳定性问题并主动补偿受影响用户", "fix stability bugs first and compensate "
             "affected users", "产品缺陷"),
    "competitor": ("针对竞品做功能与体验对比，补齐差距", "compare against competitors and close "
                   "the gaps", "转向竞品"),
    "support": ("缩短客服响应时间", "shorten support response times", "客服体验"),
}


_REFUND_STATUS_ZH = {"processing": "处理中", "completed": "已退款", "rejected": "已拒绝",
                    "cancelled": "已取消"}



def _refund_status(status: Any, lang: Language) -> str:
    return _REFUND_STATUS_ZH.get(str(status), str(status)) if lang == "zh" else str(status)


def _get(value: Any, key: str, default: Any = None) -> Any:
    return value.get(key, default) if isinstance(value, dict) else default


def _preview(value: Any) -> str:
    return preview(value, _PREVIEW)


def compose_answer(plan: Plan) -> str:
    """Compose the final answer from the plan's finished steps (no LLM involved).

    After a follow-up only the steps added for it are summarised: the earlier answer stays
    where it was shown, and repeating it would say everything twice.
    """
    lang = detect_language(plan.goal)
    synthesis = plan.synthesis_step()
    earlier = _earlier_answer_steps(plan, synthesis)
    sections: list[str] = []
    for step in plan.steps:
        if (synthesis is not None and step.id == synthesis.id) or step.id in earlier:
            continue
        try:
            text = _section(plan, step, lang)
        except Exception as exc:  # one odd result must not hide the others
            text = in_language(lang, f"{step.id}: could not summarise the result ({exc})",
                               f"{step.id}：无法整理结果（{exc}）")
        if text:
            sections.append(text)
    if not sections:
        sections.append(in_language(lang, "There are no results to summarise.",
                                    "没有可汇总的结果。"))
    period = _period_line(plan)
    if period:
        sections.insert(0, period)
    if earlier:
        head = in_language(lang,
                           "For your follow-up, here is what the new steps found (the earlier "
                           "answer still stands):",
                           "针对追加的请求，新的结果如下（之前的回答仍然有效）：")
        parts = [head, *sections]
    else:
        parts = [in_language(lang, "Here is what I found and did:",
                             "以下是本次处理结果："), *sections,
                 in_language(lang, "Let me know if there is anything else.",
                             "如有其他问题，随时联系我！")]
    answer = "\n\n".join(parts)
    return answer if lang == "zh" else english_names(answer, plan)


def _period_line(plan: Plan) -> str:
    """The period the plan's analysis covers, as its constraint names it ("Period: …")."""
    named = next((c for c in plan.constraints
                  if c.startswith((PERIOD_PREFIX.en, PERIOD_PREFIX.zh))), "")
    return f"🗓️ {named}" if named else ""


def _earlier_answer_steps(plan: Plan, synthesis: Step | None) -> set[str]:
    """The ids of an earlier synthesis step the final one builds on, and of all it covered."""
    if synthesis is None:
        return set()
    earlier = [d for d in synthesis.depends_on if d in plan.ids()
               and plan.step(d).tool is None and plan.step(d).status == "completed"
               and plan.step(d).depends_on]
    covered: set[str] = set()
    stack = list(earlier)
    while stack:
        step_id = stack.pop()
        if step_id in covered or step_id not in plan.ids():
            continue
        covered.add(step_id)
        stack.extend(plan.step(step_id).depends_on)
    return covered


def _section(plan: Plan, step: Step, lang: Language) -> str:
    why = _why(step, lang)
    if step.status == "failed":
        if step.tool is None:
            return in_language(lang, f"⚠️ Not done: {step.description} ({why or 'needs an LLM'})",
                               f"⚠️ 未完成：{step.description}（{why or '需要大模型'}）")
        if step.tool == "apply_refund":
            return in_language(lang, f"⚠️ The refund did not go through: {why}",
                               f"⚠️ 退款没有成功：{why}")
        return in_language(lang, f"✗ {step.description}: failed ({why})",
                           f"✗ {step.description}：失败（{why}）")
    if step.status == "skipped":
        if step.tool == "apply_refund":
            return _skipped_refund(plan, step, lang)
        return in_language(
            lang,
            f"⏭ Skipped: {step.description} ({why or 'its condition was false'})",
            f"⏭ 已跳过：{step.description}（{why or '条件不满足'}）")
    if step.status != "completed":
        return in_language(lang, f"○ Not run: {step.description}", f"○ 未执行：{step.description}")
    renderer = _RENDERERS.get(step.tool or "")
    if renderer is not None:
        return renderer(plan, step, lang)
    return f"• {step.description}: {_preview(step.result)}"


def _why(step: Step, lang: Language) -> str:
    """Why ``step`` failed or was skipped, in the answer's language when PlanBoard worded it
    (a tool's own error as written)."""
    return render(step.error_message or step.error, lang)


def _knowledge(plan: Plan, step: Step, lang: Language) -> str:
    hits = _get(step.result, "hits") or []
    query = _get(step.args, "query", "")
    if not hits:
        return in_language(lang, f"🔍 The knowledge base has nothing on \"{query}\".",
                           f"🔍 知识库里没有找到与“{query}”相关的内容。")
    top = hits[0]
    product = _pick_product(str(_get(top, "content", "")), _budget(plan))
    if product is not None:
        name, price, why = product
        within = _budget(plan) is not None and price <= (_budget(plan) or 0)
        budget_note = in_language(lang,
                                  f", within your budget of {_budget(plan):g}" if within else "",
                                  f"，在预算 {_budget(plan):g} 以内" if within else "")
        return in_language(
            lang,
            f"🏠 Recommended: {name} (¥{price:g}){budget_note}. Why: {why}\n"
            f"(source: {top['title']})",
            f"🏠 推荐：{name}（¥{price:g}）{budget_note}。理由：{why}\n（来源：{top['title']}）")
    lines = [in_language(
        lang,
        f"🔍 Knowledge base results for \"{query}\" (local sources, not the live web):",
        f"🔍 知识库检索“{query}”的结果（本地资料，非实时网络）：")]
    for hit in hits[:3]:
        lines += ["", f"**{bilingual_half(str(_get(hit, 'title', '')), lang)}**", ""]
        lines += _key_lines(str(_get(hit, "content", "")), lang)
    return "\n".join(lines)


def _key_lines(content: str, lang: Language, limit: int = 6) -> list[str]:
    """The informative lines of a document as Markdown: its table kept as a table, then its
    bullets, numbered points and trends as bullets (no headings or boilerplate; a long
    paragraph cut where a word ends). Lines in the answer's language only; a document with
    none is quoted as written, under a line that says so."""
    picked, plain, table = [], [], []
    for raw in content.splitlines():
        line = raw.strip().replace("**", "")
        if line.startswith("|"):
            table.append(line)
            continue
        if not line or line.startswith("#"):
            continue
        if re.match(r"^(来源|source|关键词|keywords)[:：]", line, re.I):
            continue
        if line.startswith(("- ", "* ")) or re.match(r"^\d+\.", line) or re.search(
            r"趋势|trend", line, re.I
        ):
            picked.append(line.lstrip("-* ").strip())
        else:
            plain.append(clip_words(line, _LINE_CHARS))
    prose = [] if table else plain
    candidates = picked or prose
    ours = ([line for line in picked if written_in(line, lang)]
            or [line for line in prose if written_in(line, lang)])
    if ours or not candidates:
        bullets = [f"- {line}" for line in ours[:limit]]
    else:
        bullets = [in_language(lang, "Quoted as the document words it (it has no English):",
                               "以下按原文引用（文档没有中文）："), "",
                   *(f"> - {line}" for line in candidates[:limit])]
    shown = table_lines(table)
    return [*shown, "", *bullets] if shown and bullets else [*shown, *bullets]


def _budget(plan: Plan) -> float | None:
    for constraint in plan.constraints:
        match = re.search(r"budget\s*<=\s*(\d+(?:\.\d+)?)", constraint)
        if match:
            return float(match.group(1))
    return None


def _pick_product(content: str, budget: float | None) -> tuple[str, float, str] | None:
    """The first bold product bullet with a price (within the budget, when there is one)."""
    for match in _PRODUCT_LINE.finditer(content):
        price = _PRICE.search(match.group("name") + match.group("why"))
        if price is None:
            continue
        value = float(price.group(1))
        if budget is not None and value > budget:
            continue
        name = _PRICE.sub("", match.group("name")).strip(" ,，（）()")
        why = _PRICE.sub("", match.group("why")).strip(" ,，:：") or match.group("why")
        return name, value, why.lstrip("，,:： ")
    return None


def _order(plan: Plan, step: Step, lang: Language) -> str:
    r = step.result
    product = _get(r, "product") if lang == "zh" else _get(r, "product_en", _get(r, "product"))
    status = _get(r, "status_zh") if lang == "zh" else str(_get(r, "status", "")).replace("_", " ")
    signed = _get(r, "signed_at")
    text = in_language(
        lang,
        f"📦 Order {_get(r, 'order_id')}: {product}, ¥{_get(r, 'price', 0):g}, status: "
        f"{status}" + (f", signed for on {signed}" if signed else ""),
        f"📦 订单 {_get(r, 'order_id')}：{product}"
        f"（¥{_get(r, 'price', 0):g}），状态："
        f"{status}" + (f"，{signed} 签收" if signed else ""))
    refund = _get(r, "refund")
    if refund:
        shown = _refund_status(refund["status"], lang)
        text += in_language(lang,
                            f"; it already has refund {refund['refund_id']} ({refund['status']})",
                            f"；已有退款 {refund['refund_id']}（{shown}）")
    return text + in_language(lang, ".", "。")


def _refund(plan: Plan, step: Step, lang: Language) -> str:
    r = step.result
    if _get(r, "created"):
        return in_language(
            lang,
            f"💰 Refund requested for order {_get(r, 'order_id')}: refund id "
            f"{_get(r, 'refund_id')}, ¥{_get(r, 'amount', 0):g}, back to the original "
            "payment in 1-3 business days.",
            f"💰 已为订单 {_get(r, 'order_id')} 申请退款，"
            f"退款单号 {_get(r, 'refund_id')}，金额 ¥{_get(r, 'amount', 0):g}，"
            "预计 1-3 个工作日原路退回。")
    return in_language(lang,
                       f"💰 Order {_get(r, 'order_id')} already has refund {_get(r, 'refund_id')} "
                       f"({_get(r, 'status')}); no second refund was created.",
                       f"💰 订单 {_get(r, 'order_id')} 已有退款 {_get(r, 'refund_id')}"
                       f"（{_refund_status(_get(r, 'status'), lang)}），没有重复申请。")


def _skipped_refund(plan: Plan, step: Step, lang: Language) -> str:
    order_id = _get(step.args, "order_id", "")
    order = next((plan.step(d) for d in step.depends_on if d in plan.ids()
                  and plan.step(d).tool == "query_order"), None)
    result = order.result if order is not None else None
    refund = _get(result, "refund")
    if refund:
        return in_language(lang, f"⏭ Order {order_id} already has refund {refund['refund_id']} "
                           f"({refund['status']}), so no second refund was requested.",
                           f"⏭ 订单 {order_id} 已有退款 {refund['refund_id']}"
                           f"（{_refund_status(refund['status'], lang)}），"
                           "无需再次申请，所以没有重复退款。")
    status = _get(result, "status")
    if status and status != "delivered":
        shown = _get(result, "status_zh", status) if lang == "zh" else status.replace("_", " ")
        return in_language(lang,
                           f"⏭ Order {order_id} is {shown}, not delivered yet, so no refund was "
                           "requested; you can ask again within 7 days after it is signed for.",
                           f"⏭ 订单 {order_id} 当前状态为“{shown}”，还没有签收，所以没有申请退款；"
                           "签收后 7 天内可以再申请。")
    if order is not None and order.status == "failed":
        return in_language(lang,
                           f"⏭ The lookup of order {order_id} failed, so no refund was requested.",
                           f"⏭ 订单 {order_id} 查询失败，所以退款没有执行。")
    why = _why(step, lang)
    return in_language(lang, f"⏭ The refund for order {order_id} was skipped "
                       f"({why or 'its condition was false'}).",
                       f"⏭ 订单 {order_id} 的退款已跳过（{why or '条件不满足'}）。")


def _logistics(plan: Plan, step: Step, lang: Language) -> str:
    r = step.result
    latest = _get(r, "latest_event") or {}
    described = bilingual_half(str(_get(latest, "description", "")), lang)
    carrier = _get(r, "carrier")
    if lang == "en":
        carrier = CARRIERS_EN.get(str(carrier), carrier)
    return in_language(
        lang,
        f"🚚 Parcel {_get(r, 'tracking_no')} ({carrier}): "
        f"{str(_get(r, 'latest_status', 'no events')).replace('_', ' ')} — {described} "
        f"({_get(latest, 'time', '')})",
        f"🚚 运单 {_get(r, 'tracking_no')}（{carrier}）最新进展："
        f"{described or '暂无'}（{_get(latest, 'time', '')}）")


def _tables(plan: Plan, step: Step, lang: Language) -> str:
    tables = ", ".join(f"{t['name']} ({t['row_count']})" for t in _get(step.result, "tables") or [])
    return in_language(lang, f"🗂️ Tables (rows): {tables}", f"🗂️ 数据表（行数）：{tables}")


def _sql(plan: Plan, step: Step, lang: Language) -> str:
    r = step.result
    columns = _get(r, "columns") or []
    rows = _get(r, "rows") or []
    lines = [f"📊 {step.description}{in_language(lang, ':', '：')}", ""]
    lines += markdown_table(columns, rows[:_ROWS_SHOWN])
    if len(rows) > _ROWS_SHOWN or _get(r, "truncated"):
        lines += ["", in_language(lang, f"… {_get(r, 'row_count', len(rows))} rows in all",
                                  f"…共 {_get(r, 'row_count', len(rows))} 行")]
    if "reason" in columns and rows:
        top = str(rows[0][columns.index("reason")])
        advice = _CHURN_ADVICE.get(top)
        if advice:
            lines += ["", in_language(lang, f"→ The main reason is {top}; suggestion: {advice[1]}.",
                                      f"→ 主要原因是{advice[2]}（{top}），建议：{advice[0]}。")]
    return "\n".join(lines)


def _web(plan: Plan, step: Step, lang: Language) -> str:
    results = _get(step.result, "results") or []
    lines = [in_language(lang, f"🌐 Web search \"{_get(step.result, 'query', '')}\":",
                         f"🌐 网络搜索“{_get(step.result, 'query', '')}”：")]
    lines += [f"- {_get(x, 'title', '')} — {_get(x, 'url', '')}" for x in results[:5]]
    return "\n".join(lines)


def _calc(plan: Plan, step: Step, lang: Language) -> str:
    return f"🧮 {_get(step.result, 'expression')} = {_get(step.result, 'value')}"


def _time(plan: Plan, step: Step, lang: Language) -> str:
    return in_language(lang, f"🕒 Current time: {_get(step.result, 'iso')}",
                       f"🕒 当前时间：{_get(step.result, 'iso')}")


def _reasoning(plan: Plan, step: Step, lang: Language) -> str:
    return f"• {step.description}: {_preview(step.result)}"


_RENDERERS: dict[str, Callable[[Plan, Step, Language], str]] = {
    "search_knowledge": _knowledge, "query_order": _order, "apply_refund": _refund,
    "query_logistics": _logistics, "list_services": services_section,
    "check_health": health_section, "diagnose": diagnose_section,
    "suggest_scale": scale_section, "describe_tables": _tables,
    "run_sql": _sql, "web_search": _web, "calculate": _calc, "get_current_time": _time,
    "": _reasoning,
}
