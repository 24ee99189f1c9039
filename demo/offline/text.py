"""How the demo reads a request: cue-word families, the entities a clause names, and why a
refund is asked for.

Clauses and search words are the engine's (core.planning.clauses); the families (refund,
logistics, ops, analytics …), the entities (orders, tracking numbers, services, budgets,
SQL) and a refund's reason are the demo's own domain. "The refund number" names what a
refund returns, not a refund to make: it is the ``refund_result`` family, not ``refund``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.base.language import Language
from core.base.messages import Both
from core.base.text import clip_words
from core.planning.clauses import clean_query

__all__ = [
    "CHURN_QUERIES",
    "PERIOD_PREFIX",
    "Entities",
    "cues",
    "extract_entities",
    "refund_reason",
    "research_topic",
]

_CUES: dict[str, str] = {
    "refund": r"退款|退货|退掉|退了|退回|申请退|refund|return (?:it|this|the|my)|send (?:it )?back"
              r"|money back",
    "policy": r"政策|规则|多久|几天|怎么退|如何|policy|policies|how long|rules",
    "logistics": r"物流|快递|运单|轨迹|到哪了|在哪|tracking|track |logistics|shipment|courier"
                 r"|where is|什么时候到|何时到|多久(?:能)?到|几号到|哪天到|when\b.{0,40}\barriv"
                 r"|\barrives?\b|\beta\b|delivery date",
    "ops": r"微服务|健康检查|健康状态|扩容|缩容|诊断|巡检|副本|microservice|micro-service|health"
           r"|scal(?:e|ing)|diagnos|replica|cpu|latency|延迟|fleet|集群|列出.{0,6}服务|所有服务"
           r"|哪些服务|list (?:all |the |every )?services|degraded"
           r"|\bservices?\b.{0,40}\b(?:down|failing|unhealthy|slow)\b"
           r"|服务.{0,10}(?:降级|宕机|挂了|异常)",
    "health": r"健康|检查|巡检|状态|异常|health|check|status|unhealthy|down",
    "diagnose": r"诊断|原因|排查|报告|异常|diagnos|root cause|\bcauses?\b|report|unhealthy|why",
    "scale": r"扩容|缩容|容量|副本|scale|scaling|capacity|replica",
    "analytics": r"流失|留存|churn|retention|attrition|订阅|subscription|\bsql\b|数据库|database"
                 r"|表结构|数据表|tables|cohort|revenue|营收|收入|销售额|\bsales\b|\bspend"
                 r"|top \d+ (?:customers|users)|按月|by month|per month|monthly",
    "churn": r"流失|留存|churn|attrition|retention|取消订阅",
    "schema": r"表结构|数据表|有哪些表|\btables\b|schema|columns|字段",
    "recommend": r"推荐|想要|想买|要买|选购|recommend|suggest|looking for|\bbuy\b|\bwant",
    "research": r"调研|研究|research|investigate|survey|现状|landscape|state of the art|综述",
    "time": r"几点|现在时间|当前时间|今天几号|日期|what time|current time|today'?s date"
            r"|what day",
    "calc_words": r"计算|算一下|等于多少|calculate|compute",
    "knowledge": r"推荐|想要|想买|要买|选购|买一?台|适合|指南|政策|规则|怎么|如何|什么是|哪款|哪个"
                 r"|介绍|recommend|suggest|want|looking for|\bbuy\b|guide|policy|which|best"
                 r"|how (?:do|long|to|much)|what is|tell me about",
    "product": r"扫地机|扫地|洗地机|耳机|净化器|手表|电饭煲|水壶|vacuum|earbud|purifier|watch"
               r"|kettle|cooker|政策|policy|运费|到账",
}
_COMPILED = {name: re.compile(pattern, re.IGNORECASE) for name, pattern in _CUES.items()}
# what a refund returns ("the refund number", "退款单号"): asked about, not asked for
_REFUND_RESULT = re.compile(
    r"refund\s*(?:number|no\.?|id|#|status|amount|progress)|退款(?:单号|编号|号码|号|状态|进度|金额)",
    re.IGNORECASE)
_ORDER_CONTEXT = re.compile(r"订单|退款|退货|退掉|退了|order(?!-service)|refund", re.IGNORECASE)
_ORDER_ID = re.compile(
    r"(?:订单|order)\s*(?:号|编号|no\.?|number|id)?\s*[:：#]?\s*(\d{4,12})(?!\d)", re.IGNORECASE
)
_LONG_NUMBER = re.compile(r"(?<![\d.A-Za-z])#?(\d{5,12})(?![\d.])")
_TRACKING = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{2,3}\d{9,14})(?!\d)")
_SERVICE_FULL = re.compile(r"(?<![a-z0-9-])([a-z][a-z0-9]*(?:-[a-z0-9]+)*-service|api-gateway)"
                           r"(?![a-z0-9-])")
_SERVICE_SHORT = re.compile(r"(?<![a-z0-9-])([a-z][a-z0-9-]{1,30})\s*(?:服务|\s+service\b)")
_NOT_SERVICES = frozenset({
    "all", "the", "each", "every", "our", "these", "those", "micro", "any", "some", "a", "my",
    "your", "customer", "web", "other", "which", "what", "this", "that", "of", "to", "for",
    "unhealthy", "healthy", "degraded", "down", "abnormal", "after-sales",
})
_BUDGET = (
    re.compile(r"(?:预算|budget|under|below|less than|within|不超过|不高于|低于)\s*(?:是|为|of|:|："
               r"|¥|￥|rmb|cny|\$)?\s*(\d+(?:\.\d+)?)", re.IGNORECASE),
    re.compile(r"(\d+(?:\.\d+)?)\s*(?:元|块)?\s*(?:以内|以下|之内)"),
)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")
_OPERAND = r"\(?\s*\d+(?:\.\d+)?\s*\)?"
_EXPRESSION = re.compile(rf"{_OPERAND}(?:\s*[-+*/×÷^]\s*{_OPERAND})+")
_DATE_LIKE = re.compile(r"\d{4}-\d{1,2}(?:-\d{1,2})?")
_SQL = re.compile(r"\b(?:select\b.+\bfrom\b.+|select\s+[\d'(].*|with\s+\w+\s+as\s*\(.+)",
                  re.IGNORECASE | re.DOTALL)
_RESEARCH_FILLER = re.compile(
    r"调研|研究|写一份|写个|简要|简短|报告|现状|research|investigate|write|short|brief|report"
    r"|current|state of|and|on|about", re.IGNORECASE
)

# the churn analysis of a period: {name}/{label} word it, {since} (three months before its
# start), {start} and {end} (exclusive) bound it
CHURN_QUERIES: tuple[tuple[str, str, str], ...] = (
    ("按月统计截至{name}的流失人数", "Count churned users per month up to {name}",
     "SELECT substr(churned_at, 1, 7) AS month, COUNT(*) AS churned FROM churn_events "
     "WHERE churned_at >= '{since}' AND churned_at < '{end}' GROUP BY month ORDER BY month"),
    ("统计{label}的流失原因", "Churn reasons in {label}",
     "SELECT reason, COUNT(*) AS churned FROM churn_events WHERE churned_at >= '{start}' "
     "AND churned_at < '{end}' GROUP BY reason ORDER BY churned DESC"),
    ("按套餐统计{name}的流失人数和流失率", "Churn by plan in {name}, with churn rate",
     "SELECT c.plan, COUNT(*) AS churned, ROUND(100.0 * COUNT(*) / (SELECT COUNT(*) FROM "
     "subscriptions s WHERE s.plan = c.plan AND s.started_at < '{start}' AND (s.ended_at IS "
     "NULL OR s.ended_at >= '{start}')), 1) AS churn_rate_pct FROM churn_events c WHERE "
     "c.churned_at >= '{start}' AND c.churned_at < '{end}' GROUP BY c.plan "
     "ORDER BY churned DESC"),
    ("统计{name}流失用户的客服反馈类别", "Support feedback of users who churned in {name}",
     "SELECT f.category, COUNT(*) AS tickets, ROUND(AVG(f.rating), 2) AS avg_rating FROM "
     "support_feedback f JOIN churn_events c ON c.user_id = f.user_id WHERE c.churned_at >= "
     "'{start}' AND c.churned_at < '{end}' GROUP BY f.category ORDER BY tickets DESC"),
)
# the plan's constraint that names the period its analysis covers, and the answer's line
PERIOD_PREFIX = Both(en="Period: ", zh="时间段：")


@dataclass
class Entities:
    """What a clause names: order ids, tracking numbers, services, budget, numbers, SQL."""

    orders: list[str] = field(default_factory=list)
    tracking: list[str] = field(default_factory=list)
    services: list[str] = field(default_factory=list)
    budget: float | None = None
    numbers: list[float] = field(default_factory=list)
    expression: str | None = None
    sql: str | None = None


def cues(clause: str) -> set[str]:
    """The cue-word families a clause contains, plus the entity-driven ones (shop, calc)
    and ``refund_result`` for a mention of what a refund returns."""
    asked = _REFUND_RESULT.sub(" ", clause)
    flags = {name for name, pattern in _COMPILED.items() if pattern.search(asked)}
    if asked != clause:
        flags.add("refund_result")
    found = extract_entities(clause)
    if found.orders or found.tracking or flags & {"refund", "refund_result"}:
        flags.add("shop")
    if found.services:
        flags.add("ops")
    if found.sql:
        flags.add("analytics")
    if found.expression and ("calc_words" in flags or re.search(r"[+*/×÷^]", found.expression)):
        flags.add("calc")
    return flags


def extract_entities(clause: str) -> Entities:
    """Read order ids, tracking numbers, services, budget, numbers, arithmetic and SQL."""
    found = Entities()
    found.tracking = list(dict.fromkeys(m.upper() for m in _TRACKING.findall(clause)))
    orders = _ORDER_ID.findall(clause)
    if _ORDER_CONTEXT.search(clause):
        orders += _LONG_NUMBER.findall(clause)
    found.orders = list(dict.fromkeys(orders))
    lowered = clause.lower()
    services = _SERVICE_FULL.findall(lowered) + [
        name for name in _SERVICE_SHORT.findall(lowered) if name not in _NOT_SERVICES
    ]
    found.services = list(dict.fromkeys(services))
    for pattern in _BUDGET:
        match = pattern.search(clause)
        if match:
            found.budget = float(match.group(1))
            break
    found.numbers = [float(n) for n in _NUMBER.findall(clause)][:20]
    for match in _EXPRESSION.finditer(clause):
        candidate = match.group(0).strip()
        if not _DATE_LIKE.fullmatch(candidate):
            found.expression = candidate.replace("×", "*").replace("÷", "/").replace("^", "**")
            break
    sql = _SQL.search(clause)
    found.sql = sql.group(0).strip() if sql else None
    return found


# why a refund is asked for, in the request's own words
_CAUSE = re.compile(r"\b(?:because|due to)\b\s*(?:of\s+)?(?P<cause>[^.;!?,，。；！？\n]{3,80})"
                    r"|(?:因为|由于|原因是)\s*(?P<cause_zh>[^，。；！？,.;!?\n]{2,40})",
                    re.IGNORECASE)
_DEFECT = re.compile(r"坏|故障|破损|破了|碎|裂|质量|不能用|用不了|不工作|划痕|broken|faulty"
                     r"|defect|damaged|cracked|scratched|not working|doesn'?t work|does not work"
                     r"|stopped working|dead on arrival", re.IGNORECASE)
_PIECES = re.compile(r"[。；;！!？?\n,，]+|\.(?:\s+|$)|\b(?:and|then|but)\b|然后|并且|但是")
_ORDER_MENTION = re.compile(r"(?:\b(?:from|of|in|for)\s+)?(?:\bmy\s+|我的)?(?:订单|order)\s*"
                            r"(?:号|no\.?|number|#)?\s*[:：#]?\s*\d{4,12}", re.IGNORECASE)
_REASON_CHARS = 80
# a reason the request names without a statement to quote, and one when nothing says why
_BROKEN = Both(en="item is broken", zh="商品故障")
_ASKED = Both(en="the customer asked for a refund", zh="用户申请退款")


def refund_reason(request: str, clause: str, lang: Language) -> str:
    """Why the refund of ``clause`` is asked for, from the request's own words: a stated
    cause ("because it is the wrong size") or a statement of a defect ("it arrived broken",
    "屏幕碎了") quoted as written; a defect named only in the ask itself ("refund the broken
    one") as "item is broken"; else, since nothing says why, "the customer asked for a
    refund" (worded in ``lang``)."""
    for text in (clause, request):
        cause = _CAUSE.search(text)
        if cause:
            return _quoted(cause.group("cause") or cause.group("cause_zh"))
    named = False
    for piece in _PIECES.split(request):
        if piece and _DEFECT.search(piece):
            named = True
            statement = _quoted(_ORDER_MENTION.sub(" ", piece))
            if not cues(piece) & {"refund", "refund_result"} and _DEFECT.search(statement):
                return statement
    return (_BROKEN if named else _ASKED).word(lang)


def _quoted(words: str) -> str:
    """``words`` as a reason: one line, without outer punctuation, whole words only."""
    return clip_words(" ".join(words.split()).strip(" ,，。.;；:："), _REASON_CHARS)


def research_topic(clause: str) -> str:
    """The topic of a research clause: its search words without the words of asking for
    research ("调研", "write a short report")."""
    return clean_query(clause, filler=_RESEARCH_FILLER)
