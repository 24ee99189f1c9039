"""Web research for seed 002: ``web_search`` through a SearXNG instance's JSON API.

The tool exists only when PLANBOARD_SEARXNG_URL is set; without it the planner is never
offered web search and research runs on the local knowledge base instead.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping

from core.base.messages import msg
from core.errors import ToolExecutionError
from core.tools.registry import Tool, ToolRegistry, make_tool
from core.tools.tool_texts import BUILTIN_TEXTS_ZH, translated

__all__ = ["SEARXNG_ENV", "make_web_search", "register_research_tools", "searxng_search"]

logger = logging.getLogger(__name__)
SEARXNG_ENV = "PLANBOARD_SEARXNG_URL"
_TIMEOUT_S = 10.0
_KEYWORDS = ("web", "search", "internet", "online", "research", "latest", "news", "搜索",
             "网上", "调研", "最新", "资料", "现状")


def searxng_search(base_url: str, query: str, max_results: int = 5) -> dict:
    """Query ``base_url``/search?format=json and return {"query", "results": [...], "source"}."""
    if not query.strip():
        raise ToolExecutionError(msg("search.empty_query"))
    params = urllib.parse.urlencode({"q": query, "format": "json"})
    url = f"{base_url.rstrip('/')}/search?{params}"
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:
            payload = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        raise ToolExecutionError(msg("search.http_error", status=exc.code, url=base_url)) from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise ToolExecutionError(msg("search.unreachable", url=base_url, error=str(exc),
                                     variable=SEARXNG_ENV)) from None
    except ValueError:
        raise ToolExecutionError(msg("search.not_json", url=base_url)) from None
    results = [
        {"title": item.get("title", ""), "url": item.get("url", ""),
         "content": item.get("content", "")}
        for item in (payload.get("results") or [])[: max(1, min(max_results, 10))]
        if isinstance(item, dict)
    ]
    return {"query": query, "results": results, "source": "web (SearXNG)"}


def make_web_search(base_url: str) -> Tool:
    """The web_search tool bound to one SearXNG instance."""

    def web_search(query: str, max_results: int = 5) -> dict:
        """Search the web through SearXNG and return titles, URLs and snippets.

        Args:
            query: what to search for, for example "AI coding tools comparison".
            max_results: how many results to return (1-10).
        """
        return searxng_search(base_url, query, max_results)

    search: Callable[..., dict] = web_search
    made = make_tool(search, read_only=True, keywords=_KEYWORDS)
    return translated(made, {"zh": BUILTIN_TEXTS_ZH[made.name]})


def register_research_tools(
    registry: ToolRegistry, environ: Mapping[str, str] | None = None
) -> bool:
    """Add web_search when PLANBOARD_SEARXNG_URL is set; return whether it was added."""
    env = os.environ if environ is None else environ
    base_url = (env.get(SEARXNG_ENV) or "").strip()
    if not base_url:
        logger.debug("%s is not set: web_search is not registered", SEARXNG_ENV)
        return False
    registry.add(make_web_search(base_url))
    return True
