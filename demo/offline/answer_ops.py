"""The offline answer's operations sections, in the request's language.

The ops tools word their findings in English templates ("CPU at 93% (threshold 85%)"); a
Chinese answer rewords each template here, so that it holds no English sentence. A log line
no template covers is quoted as a log (code span), data rather than a sentence of the answer.
"""

from __future__ import annotations

import re
from typing import Any

from core.base.language import Language
from core.plan.model import Plan, Step
from demo.messages import in_language

__all__ = ["diagnose_section", "health_section", "scale_section", "services_section"]

_STATUS_ZH = {"healthy": "正常", "degraded": "降级", "down": "宕机", "unknown": "未知"}
# English template → Chinese wording; the groups carry the numbers and dates across.
_PHRASES_ZH: list[tuple[re.Pattern[str], str]] = [(re.compile(p), zh) for p, zh in [
    (r"^0 of (\d+) replicas are ready$", r"\1 个副本全部未就绪"),
    (r"^error rate ([\d.]+)% \(threshold ([\d.]+)%\)$", r"错误率 \1%（阈值 \2%）"),
    (r"^CPU at ([\d.]+)% \(threshold ([\d.]+)%\)$", r"CPU \1%（阈值 \2%）"),
    (r"^memory at ([\d.]+)% \(threshold ([\d.]+)%\)$", r"内存 \1%（阈值 \2%）"),
    (r"^p99 latency ([\d.]+) ms \(threshold ([\d.]+) ms\)$", r"p99 延迟 \1 ms（阈值 \2 ms）"),
    (r"^restore the minimum replicas, then fix the crash \(see recent log\)$",
     "先恢复最少副本数，再修复崩溃（见最近日志）"),
    (r"^check the (\S+) deploy and downstream dependencies$", r"检查 \1 的发布和下游依赖"),
    (r"^scale out and profile the hottest endpoint$", "扩容，并分析最热的接口"),
    (r"^look for a memory leak; raise the limit temporarily$", "排查内存泄漏，临时调高内存上限"),
    (r"^no problem found$", "未发现问题"),
    (r"^fix the crash first; scaling a crashing service adds nothing$",
     "先修复崩溃；给崩溃中的服务扩容没有意义"),
    (r"^errors come from a dependency, not load: keep replicas$",
     "错误来自依赖而非负载：保持副本数"),
    (r"^CPU ([\d.]+)% / p99 ([\d.]+) ms: scale out ×1\.5$", r"CPU \1% / p99 \2 ms：扩容 1.5 倍"),
    (r"^memory pressure: add one replica while the leak is fixed$",
     "内存压力大：修复泄漏期间加一个副本"),
    (r"^CPU only ([\d.]+)%: one replica can go$", r"CPU 仅 \1%：可以减少一个副本"),
    (r"^load is within limits$", "负载在正常范围内"),
    # the demo fleet's recent logs
    (r"^GC pauses up to (\d+) ms; thread pool saturated on (.+)$",
     r"GC 停顿最长 \1 ms；\2 的线程池已满"),
    (r"^timeouts calling third-party gateway \((.+)\) after (\S+) deploy$",
     r"\2 发布后调用第三方网关（\1）超时"),
    (r"^all (\d+) pods in CrashLoopBackOff: OOMKilled after index rebuild$",
     r"\1 个 Pod 全部处于 CrashLoopBackOff：重建索引后内存溢出（OOMKilled）"),
    (r"^heap usage climbing steadily since (\S+) deploy$", r"自 \1 发布后堆内存持续上涨"),
    (r"^slow aggregate queries: the daily report job overlaps peak traffic$",
     "聚合查询慢：每日报表任务与流量高峰重叠"),
]]


def _get(value: Any, key: str, default: Any = None) -> Any:
    return value.get(key, default) if isinstance(value, dict) else default


def _status(status: Any, lang: Language) -> str:
    return _STATUS_ZH.get(str(status), str(status)) if lang == "zh" else str(status)


def _phrase(text: Any, lang: Language) -> str:
    """One finding, cause, action or reason in ``lang``; a text no template covers whole is
    reworded part by part (parts split on "; ")."""
    text = str(text)
    if lang != "zh":
        return text
    whole = _phrase_zh(text)
    if whole is not None:
        return whole
    return "；".join(_phrase_zh(part) or f"`{part}`" for part in text.split("; "))


def _phrase_zh(part: str) -> str | None:
    for pattern, zh in _PHRASES_ZH:
        if pattern.match(part):
            return pattern.sub(zh, part)
    return None


def services_section(plan: Plan, step: Step, lang: Language) -> str:
    """The list of services (left out when a health check covers them)."""
    if any(s.tool == "check_health" and s.status == "completed" for s in plan.steps):
        return ""
    names = ", ".join(_get(step.result, "names") or [])
    return in_language(lang, f"🖥️ {_get(step.result, 'count', 0)} services: {names}",
                       f"🖥️ 共 {_get(step.result, 'count', 0)} 个服务：{names}")


def health_section(plan: Plan, step: Step, lang: Language) -> str:
    """The health check: how many services are unhealthy, and which."""
    r = step.result
    checks = {c["service"]: c["status"] for c in _get(r, "services") or [] if isinstance(c, dict)}
    unhealthy = _get(r, "unhealthy") or []
    if not unhealthy:
        return in_language(lang,
                           f"🩺 Health check: all {_get(r, 'checked', 0)} services are healthy.",
                           f"🩺 健康检查：{_get(r, 'checked', 0)} 个服务全部正常。")
    listed = in_language(lang, ", ", "、").join(
        in_language(lang, f"{name} ({checks.get(name, '?')})",
                    f"{name}（{_status(checks.get(name, '?'), lang)}）") for name in unhealthy)
    return in_language(lang,
                       f"🩺 Health check: {len(unhealthy)} of {_get(r, 'checked', 0)} services are "
                       f"unhealthy: {listed}",
                       f"🩺 健康检查：{_get(r, 'checked', 0)} 个服务中 {len(unhealthy)} 个异常："
                       f"{listed}")


def diagnose_section(plan: Plan, step: Step, lang: Language) -> str:
    """One line per diagnosed service: findings, likely cause, next actions."""
    items = _get(step.result, "diagnoses") or []
    if not items:
        return in_language(lang, "🔧 No service needed a diagnosis.", "🔧 没有需要诊断的服务。")
    lines = [in_language(lang, "🔧 Diagnosis:", "🔧 诊断：")]
    for d in items:
        sep = in_language(lang, "; ", "；")
        findings = sep.join(_phrase(f, lang) for f in d.get("findings") or []) or in_language(
            lang,
            "no problem found",
            "未发现问题")
        actions = sep.join(_phrase(a, lang) for a in d.get("recommended_actions") or [])
        cause = _phrase(d.get("likely_cause", ""), lang)
        status = _status(d.get("status"), lang)
        lines.append(in_language(lang,
                                 f"- {d['service']} ({status}): {findings}; likely cause: {cause}"
                                 + (f"; next: {actions}" if actions else ""),
                                 f"- {d['service']}（{status}）：{findings}；可能原因：{cause}"
                                 + (f"；建议：{actions}" if actions else "")))
    return "\n".join(lines)


def scale_section(plan: Plan, step: Step, lang: Language) -> str:
    """One line per service: replicas now → suggested, and why."""
    items = _get(step.result, "suggestions") or []
    if not items:
        return in_language(lang, "📈 No service needs a capacity change.",
                           "📈 没有需要调整容量的服务。")
    lines = [in_language(lang, "📈 Scaling suggestions:", "📈 扩容建议：")]
    for s in items:
        reason = _phrase(s["reason"], lang)
        lines.append(in_language(lang, f"- {s['service']}: replicas {s['current_replicas']} → "
                                 f"{s['suggested_replicas']} ({reason})",
                                 f"- {s['service']}：副本 {s['current_replicas']} → "
                                 f"{s['suggested_replicas']}（{reason}）"))
    return "\n".join(lines)
