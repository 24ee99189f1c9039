"""The demo databases under PLANBOARD_HOME: create them on demand, or recreate them."""

from __future__ import annotations

import logging
from pathlib import Path

from core.base.home import planboard_home
from demo.analytics import analytics_db_path, ensure_analytics_db
from demo.db import remove_database
from demo.knowledge import ensure_knowledge_db
from demo.ops import ensure_ops_db, ops_db_path
from demo.shop import ensure_shop_db, shop_db_path

__all__ = ["ensure_demo_data", "reset_demo_data"]

logger = logging.getLogger(__name__)


def ensure_demo_data() -> dict[str, Path]:
    """Create any missing demo database (shop, knowledge, ops, analytics); return their paths."""
    return {
        "shop": ensure_shop_db(),
        "knowledge": ensure_knowledge_db(),
        "ops": ensure_ops_db(),
        "analytics": ensure_analytics_db(),
    }


def reset_demo_data() -> Path:
    """Delete every demo database (demo refunds are lost), create them afresh; return the home."""
    home = planboard_home()
    targets = [shop_db_path(), ops_db_path(), analytics_db_path(), *home.glob("knowledge-*.db")]
    for path in targets:
        remove_database(path)
    ensure_demo_data()
    logger.info("demo data reset under %s", home)
    return home
