"""The demo tools' descriptions in Chinese, given to each tool when the pack registers it.

The models read the tools' English docstrings; a person reading the dashboard in Chinese
sees these (core.tools.tool_texts).
"""

from __future__ import annotations

__all__ = ["TEXTS_ZH"]

# tool -> (its description, {parameter: its description})
TEXTS_ZH: dict[str, tuple[str, dict[str, str]]] = {
    "apply_refund": ("为已签收且在 7 天退货期内的订单申请退款（幂等：已有的退款直接返回）。", {
        "order_id": "要退款的订单号，例如“10001”。",
        "reason": "客户要求退款的原因。"}),
    "check_health": ("检查一个、一组或全部服务的健康状态（正常 | 降级 | 宕机）和关键指标。", {
        "service": "服务名（如“example-service”）、服务名列表，或“all”。"}),
    "describe_tables": ("说明分析用的数据表（users、subscriptions、churn_events、"
                        "support_feedback）。", {}),
    "diagnose": ("诊断一个或一组服务：对照阈值的发现、可能的原因和下一步行动。", {
        "service": "服务名、服务名列表（例如异常的那些），或“all”。"}),
    "list_services": ("列出所有微服务，以及各自的团队和副本数。", {}),
    "query_logistics": ("按运单号查询物流：承运商、每条扫描记录和最新状态。", {
        "tracking_no": "订单上的运单号，例如“SF0000000000”。"}),
    "query_order": ("查询订单：商品、价格、状态、运单号、签收时间和退款情况。", {
        "order_id": "订单号，例如“10001”。"}),
    "run_sql": ("在分析数据表上执行一条只读的 SELECT；最多返回 200 行。", {
        "query": "一条 SQLite SELECT（或 WITH ... SELECT）语句，例如“SELECT reason, COUNT(*) "
                 "AS churned FROM churn_events GROUP BY reason”。数据表：users(user_id, "
                 "signup_date, plan, country, channel)、subscriptions(subscription_id, "
                 "user_id, plan, monthly_price, started_at, ended_at, status)、"
                 "churn_events(event_id, user_id, plan, churned_at, reason)、"
                 "support_feedback(feedback_id, user_id, created_at, category, rating, "
                 "comment)；日期为“YYYY-MM-DD”文本。"}),
    "search_knowledge": ("按语义搜索商城知识库（商品指南、政策、运维手册、笔记）；只返回与查询"
                         "相关的文档（没有相关内容时不返回）。", {
        "query": "要查找的内容，中文或英文均可，例如“扫地机 老人”。",
        "top_k": "返回的文档数（1-10）。"}),
    "suggest_scale": ("根据 CPU、延迟、内存和错误率，为一个或一组服务建议副本数。", {
        "service": "服务名、服务名列表（例如异常的那些），或“all”。"}),
}
