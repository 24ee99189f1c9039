"""Planner prompt sizes: the full and the compact style, over the default tool catalogue.

``python -m bench.prompts`` prints, per style and request language, the characters of the
planner's system prompt (what a model reads before the request) and an approximate token
count (about four characters per token for Latin text, one per Chinese character: a
guide for small models' attention, not any tokenizer's exact count), and the share of the
compact style against the full one (``--markdown``: as a GitHub table).
"""

from __future__ import annotations

import argparse
import re

from bench.tables import Table
from core.base.language import Language
from core.llm.providers import PromptStyle
from core.planning.exchange import catalogue
from core.prompts.planning import planner_system_prompt
from core.tools.toolsets import default_registry

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def approx_tokens(text: str) -> int:
    """About four Latin characters per token, one per Chinese character or punctuation."""
    chinese = len(_CJK.findall(text))
    return chinese + (len(text) - chinese + 3) // 4


def sizes() -> list[tuple[PromptStyle, Language, int, int]]:
    """(style, language, characters, approximate tokens) of each planner system prompt."""
    entries = catalogue(default_registry({}))
    rows = []
    for style in ("full", "compact"):
        for language in ("en", "zh"):
            prompt = planner_system_prompt(entries, language=language, style=style)
            rows.append((style, language, len(prompt), approx_tokens(prompt)))
    return rows


def table() -> Table:
    """The sizes as a table, with the compact style's share of the full one."""
    rows = sizes()
    full = {language: chars for style, language, chars, _ in rows if style == "full"}
    result = Table("Planner system prompt size per style and request language, default "
                   "tool catalogue", ["style", "lang", "chars", "~tokens", "vs full"],
                   align="llrrr", timed=False)
    for style, language, chars, tokens in rows:
        result.rows.append([style, language, str(chars), str(tokens),
                            f"{chars / full[language]:.0%}"])
    result.notes.append("~tokens: about four Latin characters per token, one per Chinese "
                        "character (a guide, not any tokenizer's exact count).")
    return result


def main(argv: list[str] | None = None) -> int:
    """Print the table of sizes (``--markdown``: as a GitHub table)."""
    parser = argparse.ArgumentParser(prog="python -m bench.prompts", description=__doc__)
    parser.add_argument("--markdown", action="store_true",
                        help="print a GitHub Markdown table headed by what, on what and when")
    args = parser.parse_args(argv)
    sized = table()
    print(sized.markdown("python -m bench.prompts") if args.markdown else sized.text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
