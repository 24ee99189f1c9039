"""The period a request names, resolved to dates: explicit ("Q1 2026", "2026年3月") or
relative to today ("last quarter", "过去30天"), with a label in both languages.

A quarter named without its year ("Q1", "一季度") is the latest one of that name that has
begun by today: in December, "Q1" is this year's first quarter, in February "Q4" last year's.

A relative period is read against today's date: ``PLANBOARD_TODAY`` (an ISO date, for demos
and tests) or else the local date. When the tools' data ends before a relative period
starts (a pack declares the last day its data holds), the period moves to the latest one of
the same size that the data covers, and its label says so; an explicit period never moves:
an empty result is then the honest answer. A request naming two different periods names
none that one set of bounds could serve.
"""

from __future__ import annotations

import calendar
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from core.base.language import Language
from core.base.messages import Both, Message, msg, render
from core.errors import ConfigError
from core.planning.packs import data_until
from core.tools.registry import ToolRegistry

__all__ = [
    "TODAY_ENV",
    "Period",
    "calendar_period",
    "request_period",
    "resolve_period",
    "today",
]

TODAY_ENV = "PLANBOARD_TODAY"

Unit = Literal["year", "quarter", "month", "week", "days", "weeks", "months"]
_CALENDAR_UNITS = ("year", "quarter", "month", "week")


@dataclass(frozen=True)
class Period:
    """Dates from ``start`` up to ``end`` (exclusive), its ``name`` ("2026 Q3"), its
    ``bounds`` ("1 Jul – 30 Sep 2026") and the ``label`` that names it with its dates and,
    when moved, which period was asked for.

    ``relative``: read against today ("last quarter"); ``moved``: a relative period the data
    does not reach, replaced by the latest one it holds (the label says which was asked).
    """

    start: date
    end: date
    unit: Unit
    name: Message
    bounds: Both
    label: Message
    relative: bool
    moved: bool = False

    @property
    def dated(self) -> Message:
        """The name and the dates, without why it moved: "2026 Q2 (1 Apr – 24 Jun 2026)"."""
        return msg("period.label", name=self.name, bounds=self.bounds)

    def describe(self, language: Language | str) -> str:
        """The label in ``language``: "2026 Q3 (1 Jul – 30 Sep 2026)"."""
        return render(self.label, language)


def today(environ: Mapping[str, str] | None = None) -> date:
    """Today's date: PLANBOARD_TODAY of ``environ`` (YYYY-MM-DD) when set, else the local date."""
    env = os.environ if environ is None else environ
    raw = env.get(TODAY_ENV, "").strip()
    if not raw:
        return date.today()
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ConfigError(msg("config.not_date", variable=TODAY_ENV, raw=raw)) from None


def request_period(request: str, registry: ToolRegistry, *, on: date | None = None
                   ) -> Period | None:
    """The period ``request`` names, read against ``on`` (default :func:`today`) and the
    span of the data the registry's packs declare; None when it names none (or several)."""
    return resolve_period(request, on or today(), data_until(registry))


# ---- reading a request ------------------------------------------------------------------

_SMALL_NUMBERS = {word: value for value, word in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve"))}
_CHINESE_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
                   "八": 8, "九": 9}
# English names written out: calendar's follow the process's locale
_MONTH_FULL = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")
_MONTH_SHORT = tuple(name[:3] for name in _MONTH_FULL)
_MONTH_NAMES = {name.lower(): index + 1 for names in (_MONTH_FULL, _MONTH_SHORT)
                for index, name in enumerate(names)} | {"sept": 9}
_MONTH_WORDS = "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))

# a year as a period ("in 2026", "Q1 2026", "2026 年"), not a budget ("under 2000")
_YEAR = re.compile(r"(?<!\d)(20\d{2})\s*(?:年|Q[1-4]\b)|\b(?:in|of|during|for|year|Q[1-4])\s+"
                   r"(20\d{2})\b", re.IGNORECASE)
_QUARTERS = (
    re.compile(r"\b(?:first|1st)\s+quarter\b|\bQ1\b|第一季度|一季度|第?1\s*季度", re.IGNORECASE),
    re.compile(r"\b(?:second|2nd)\s+quarter\b|\bQ2\b|第二季度|二季度|第?2\s*季度", re.IGNORECASE),
    re.compile(r"\b(?:third|3rd)\s+quarter\b|\bQ3\b|第三季度|三季度|第?3\s*季度", re.IGNORECASE),
    re.compile(r"\b(?:fourth|4th)\s+quarter\b|\bQ4\b|第四季度|四季度|第?4\s*季度", re.IGNORECASE),
)
_MONTHS = (
    re.compile(rf"\b({_MONTH_WORDS})\.?\s+(20\d{{2}})\b", re.IGNORECASE),
    re.compile(r"(?<!\d)(20\d{2})\s*年\s*(1[0-2]|0?[1-9])\s*月"),
    re.compile(r"(?<![\d-])(20\d{2})-(1[0-2]|0[1-9])(?![\d-])"),
)
_COUNT = r"(\d{1,3}|[一二两三四五六七八九十]{1,3}|" + "|".join(_SMALL_NUMBERS) + ")"
_ROLLING = (
    (re.compile(rf"\b(?:past|last|previous)\s+{_COUNT}\s+(day|week|month)s?\b", re.IGNORECASE),
     {"day": "days", "week": "weeks", "month": "months"}),
    (re.compile(rf"(?:过去|最近|近)\s*{_COUNT}\s*(天|日|周|个星期|星期|个月|月)"),
     {"天": "days", "日": "days", "周": "weeks", "个星期": "weeks", "星期": "weeks",
      "个月": "months", "月": "months"}),
)
_RELATIVE: tuple[tuple[re.Pattern[str], Unit, int], ...] = (
    (re.compile(r"\b(?:last|previous|prior|past)\s+quarter\b|上一?个?季度", re.I), "quarter", -1),
    (re.compile(r"\b(?:this|current)\s+quarter\b|本季度|这个季度|当前季度", re.I), "quarter", 0),
    (re.compile(r"\b(?:last|previous|prior|past)\s+month\b|上一?个月|上月", re.I), "month", -1),
    (re.compile(r"\b(?:this|current)\s+month\b|本月|这个月", re.I), "month", 0),
    (re.compile(r"\b(?:last|previous|prior)\s+year\b|去年|上一年", re.I), "year", -1),
    (re.compile(r"\b(?:this|current)\s+year\b|今年|本年度?", re.I), "year", 0),
    (re.compile(r"\b(?:last|previous|prior)\s+week\b|上一?周|上个?星期", re.I), "week", -1),
    (re.compile(r"\b(?:this|current)\s+week\b|本周|这周|这个星期", re.I), "week", 0),
)


def resolve_period(text: str, on: date, data_until: date | None = None) -> Period | None:
    """The one period ``text`` names, read against the date ``on``: an explicit one when it
    names one, else a relative one (moved to the data when ``data_until`` is before its
    start); None when it names no period, or two different ones."""
    explicit = _explicit(text)
    if explicit is not None or _names_a_year(text):
        return explicit
    found = {(unit, count) for pattern, unit, count in _RELATIVE if pattern.search(text)}
    for pattern, units in _ROLLING:
        found |= {(units[word], -_count(number)) for number, word in pattern.findall(text)
                  if _count(number) > 0}
    quarters = _quarters_named(text)
    if quarters:
        return _latest_quarter(quarters[0], on) if len(quarters) == 1 and not found else None
    if len(found) != 1:
        return None
    unit, count = found.pop()
    return _relative(unit, count, on, data_until)


def calendar_period(unit: Unit, offset: int, on: date, data_until: date | None = None
                    ) -> Period:
    """The calendar ``unit`` ``offset`` units from the one holding ``on`` (-1 with "quarter":
    last quarter), moved to the data when ``data_until`` is before its start."""
    return _relative(unit, offset, on, data_until)


def _names_a_year(text: str) -> bool:
    return bool(_YEAR.search(text) or any(pattern.search(text) for pattern in _MONTHS))


def _explicit(text: str) -> Period | None:
    years = {int(chinese or english) for chinese, english in _YEAR.findall(text)}
    months = set()
    for pattern in _MONTHS:
        for first, second in pattern.findall(text):
            year, month = (int(second), _MONTH_NAMES[first.lower()]) if not first.isdigit() \
                else (int(first), int(second))
            months.add((year, month))
            years.add(year)
    if len(years) != 1 or len(months) > 1:
        return None
    year = years.pop()
    if months:
        return _labelled(*_month_bounds(year, months.pop()[1]), "month", relative=False)
    quarters = _quarters_named(text)
    if len(quarters) == 1:
        return _labelled(*_quarter_bounds(year, quarters[0]), "quarter", relative=False)
    return _labelled(date(year, 1, 1), date(year + 1, 1, 1), "year", relative=False)


def _quarters_named(text: str) -> list[int]:
    return [index + 1 for index, pattern in enumerate(_QUARTERS) if pattern.search(text)]


def _latest_quarter(quarter: int, on: date) -> Period:
    """The quarter ``quarter`` of the latest year in which it has begun by ``on``; named
    with its year, as an explicit period is, and never moved: the request chose it."""
    year = on.year if _quarter_bounds(on.year, quarter)[0] <= on else on.year - 1
    return _labelled(*_quarter_bounds(year, quarter), "quarter", relative=False)


def _count(word: str) -> int:
    if word.isdigit():
        return int(word)
    if word.lower() in _SMALL_NUMBERS:
        return _SMALL_NUMBERS[word.lower()]
    tens, _, units = word.partition("十")
    if "十" in word:
        return (_CHINESE_DIGITS.get(tens, 1)) * 10 + _CHINESE_DIGITS.get(units, 0)
    return _CHINESE_DIGITS.get(word, 0)


# ---- calendar arithmetic ----------------------------------------------------------------


def _shift_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _month_bounds(year: int, month: int) -> tuple[date, date]:
    start = date(year, month, 1)
    return start, _shift_months(start, 1)


def _quarter_bounds(year: int, quarter: int) -> tuple[date, date]:
    start = date(year, 3 * quarter - 2, 1)
    return start, _shift_months(start, 3)


def _unit_bounds(unit: Unit, offset: int, on: date) -> tuple[date, date]:
    """The calendar unit ``offset`` units from the one holding ``on``; for a rolling unit,
    the ``-offset`` units up to and including ``on``."""
    after = on + timedelta(days=1)
    if unit == "year":
        return date(on.year + offset, 1, 1), date(on.year + offset + 1, 1, 1)
    if unit == "quarter":
        start = _shift_months(date(on.year, 3 * ((on.month - 1) // 3) + 1, 1), 3 * offset)
        return start, _shift_months(start, 3)
    if unit == "month":
        start = _shift_months(date(on.year, on.month, 1), offset)
        return start, _shift_months(start, 1)
    if unit == "week":
        start = on - timedelta(days=on.weekday()) + timedelta(weeks=offset)
        return start, start + timedelta(weeks=1)
    if unit == "months":
        return _shift_months(after, offset), after
    return after - timedelta(days=-offset * (7 if unit == "weeks" else 1)), after


def _relative(unit: Unit, offset: int, on: date, data_until: date | None) -> Period:
    start, end = _unit_bounds(unit, offset, on)
    asked = _labelled(start, end, unit, relative=True, count=-offset)
    if data_until is None or start <= data_until:
        return asked
    start, end = _unit_bounds(unit, 0 if unit in _CALENDAR_UNITS else offset, data_until)
    end = min(end, data_until + timedelta(days=1))
    held = _labelled(start, end, unit, relative=True, count=-offset, of_data=True)
    asked_name = _name(asked.start, unit, -offset)
    phrase = _ASKED.get((unit, offset))
    label = msg("period.moved", period=held.label, unit=_UNIT_WORDS[unit],
                asked=asked_name if phrase is None else msg(
                    "period.relative_name", phrase=phrase, name=asked_name),
                asked_bounds=asked.bounds)
    return Period(start, end, unit, held.name, held.bounds, label, relative=True, moved=True)


# ---- labels -----------------------------------------------------------------------------

_QUARTER_ZH = "一二三四"
_UNIT_WORDS = {"year": Both(en="year", zh="年份"), "quarter": Both(en="quarter", zh="季度"),
               "month": Both(en="month", zh="月份"), "week": Both(en="week", zh="一周"),
               "days": Both(en="period", zh="时段"), "weeks": Both(en="period", zh="时段"),
               "months": Both(en="period", zh="时段")}
_ASKED = {("quarter", -1): Both(en="last quarter", zh="上个季度"),
          ("quarter", 0): Both(en="this quarter", zh="本季度"),
          ("month", -1): Both(en="last month", zh="上个月"),
          ("month", 0): Both(en="this month", zh="本月"),
          ("year", -1): Both(en="last year", zh="去年"),
          ("year", 0): Both(en="this year", zh="今年"),
          ("week", -1): Both(en="last week", zh="上周"),
          ("week", 0): Both(en="this week", zh="本周")}


def _labelled(start: date, end: date, unit: Unit, *, relative: bool, count: int = 0,
              of_data: bool = False) -> Period:
    name = _name(start, unit, count, of_data=of_data)
    bounds = _bounds(start, end - timedelta(days=1),
                     year_in_name=unit in ("year", "quarter", "month"))
    return Period(start, end, unit, name, bounds, msg("period.label", name=name, bounds=bounds),
                  relative)


def _name(start: date, unit: Unit, count: int, *, of_data: bool = False) -> Message:
    namers: dict[str, Callable[[], Message]] = {
        "year": lambda: msg("period.year", year=start.year),
        "quarter": lambda: msg("period.quarter", year=start.year, quarter=Both(
            en=str((start.month + 2) // 3), zh=_QUARTER_ZH[(start.month - 1) // 3])),
        "month": lambda: msg("period.month", year=start.year, month=Both(
            en=_MONTH_FULL[start.month - 1], zh=str(start.month))),
        "week": lambda: msg("period.week", first=_day(start)),
    }
    if unit in namers:
        return namers[unit]()
    return msg(f"period.{'data' if of_data else 'past'}_{unit}", count=count)


def _day(day: date) -> Both:
    return Both(en=_english(day), zh=f"{day.year}年{day.month}月{day.day}日")


def _english(day: date, *, month: bool = True, year: bool = True) -> str:
    """"1 Jul 2026", or parts of it."""
    parts = [str(day.day), _MONTH_SHORT[day.month - 1] if month else "", str(day.year) if year
             else ""]
    return " ".join(part for part in parts if part)


def _bounds(first: date, last: date, *, year_in_name: bool) -> Both:
    """"1 Jul – 30 Sep 2026" / "7月1日–9月30日" (the year left to the name when it holds it)."""
    if first == last:
        english = _english(first)
    else:
        same_year = first.year == last.year
        same_month = same_year and first.month == last.month
        english = f"{_english(first, month=not same_month, year=not same_year)} – " \
                  f"{_english(last)}"
    short_first, short_last = f"{first.month}月{first.day}日", f"{last.month}月{last.day}日"
    if first.year != last.year:
        chinese = f"{first.year}年{short_first}–{last.year}年{short_last}"
    elif year_in_name:
        chinese = short_first if first == last else f"{short_first}–{short_last}"
    else:
        chinese = f"{first.year}年{short_first}" + ("" if first == last else f"–{short_last}")
    return Both(en=english, zh=chinese)
