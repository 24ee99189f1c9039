"""The demo pack: what the demo offers the engine beyond its tools."""

from __future__ import annotations

from core.base.messages import Both
from core.planning.packs import DataReset, Pack
from demo.data import reset_demo_data
from demo.scenarios import SCENARIOS

__all__ = ["DEMO_PACK"]

DEMO_PACK = Pack(
    name="demo",
    scenarios=SCENARIOS,
    reset=DataReset(
        run=reset_demo_data,
        what=Both(en="the demo shop, knowledge, ops and analytics data",
                  zh="演示用的商城、知识库、运维和分析数据"),
        restores=Both(en="refunds made in demos are undone: order 88231 is delivered again, "
                         "with no refund",
                      zh="演示中创建的退款会被撤销：订单 88231 恢复为已签收、无退款"),
    ),
)
