"""The demo pack: what the demo offers the engine beyond its tools."""

from __future__ import annotations

from core.base.messages import Both
from core.plan.model import Plan
from core.planning.packs import DataReset, Pack
from core.tools.registry import ToolRegistry
from demo.analytics import DATA_UNTIL
from demo.checks import DEMO_CHECKS
from demo.data import reset_demo_data
from demo.offline import compose_answer, offline_plan
from demo.offline.phased import phased_plan
from demo.reading import questions, read, route
from demo.scenarios import SCENARIOS

__all__ = ["DEMO_PACK"]



def _draft(request: str, registry: ToolRegistry, strict: bool) -> Plan:
    return offline_plan(request, registry, strict=strict)


def _phased(request: str, registry: ToolRegistry, strict: bool) -> Plan:
    return phased_plan(request, registry, strict=strict)


DEMO_PACK = Pack(
    name="demo",
    draft=_draft,
    phased=_phased,
    answer=compose_answer,
    read=read,
    route=route,
    questions=questions,
    checks=DEMO_CHECKS,
    scenarios=SCENARIOS,
    data_until=DATA_UNTIL,
    reset=DataReset(
        run=reset_demo_data,
        what=Both(en="the demo shop, knowledge, ops and analytics data",
                  zh="演示用的商城、知识库、运维和分析数据"),
        restores=Both(en="refunds made in demos are undone: order 88231 is delivered again, "
                         "with no refund",
                      zh="演示中创建的退款会被撤销：订单 88231 恢复为已签收、无退款"),
    ),
)
