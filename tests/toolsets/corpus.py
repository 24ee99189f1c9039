"""A person's own tools for the corpus of correct plans (tests/support/correct_plans.py):
exchange rates from two feeds, one of them down (a correct plan's call that fails and is
replanned), the weather, and a repository's log as an MCP server returns it (plain text,
under a ``SERVER__TOOL`` name)."""

from __future__ import annotations

from core.errors import ToolExecutionError
from core.tools.registry import tool

_RATES = {"EUR/USD": 1.085, "USD/CNY": 7.12, "GBP/EUR": 1.17}
_WEATHER = {"paris": ("light rain", 9), "beijing": ("sunny", 2), "london": ("fog", 7)}
LOG = ("Commit history:\nCommit: 3e2c02e0749e\nAuthor: PlanBoard\n"
       "Date: 2026-12-03 01:12:09+00:00\n"
       "Message: Teach the parcel tracker to read the carrier's Tokyo timestamps\n")


@tool(read_only=True, keywords=("rate", "exchange", "currency", "汇率"))
def fetch_rate(pair: str, source: str = "ecb") -> dict:
    """Fetch the exchange rate of a currency pair from a feed.

    Args:
        pair: the currency pair, for example "EUR/USD".
        source: the feed, "ecb" or "fed".
    """
    if source == "ecb":
        raise ToolExecutionError("the ECB feed is down for maintenance; try the fed feed")
    if pair not in _RATES:
        raise ToolExecutionError(f"no rate for {pair}")
    return {"pair": pair, "rate": _RATES[pair], "source": source}


@tool(read_only=True, keywords=("weather", "forecast", "temperature", "天气", "气温"))
def get_weather(city: str) -> dict:
    """Today's weather in a city.

    Args:
        city: the city's name in English, for example "Paris".
    """
    sky, celsius = _WEATHER.get(city.strip().lower(), ("clear", 15))
    return {"city": city, "sky": sky, "celsius": celsius}


@tool(name="git__git_log", read_only=True)
def git_log(repo_path: str, max_count: int = 10) -> str:
    """Shows the commit logs.

    Args:
        repo_path: the repository's path.
        max_count: how many commits to show.
    """
    return LOG
