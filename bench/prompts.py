"""Planner prompt sizes: the full and the compact style, over the default tool catalogue.

``python -m bench.prompts`` prints, per style and request language, the characters of the
planner's system prompt (what a model reads before the request) and an approximate token
count (about four characters per token for Latin text, one per Chinese character: a
guide for small models' attention, not any tokenizer's exact count), and the share of the
compact style against the full one.
"""

from __future__ import annotations

import re

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


def main() -> int:
    """Print the table of sizes."""
    rows = sizes()
    full = {language: chars for style, language, chars, _ in rows if style == "full"}
    print(f"{'style':<8} {'lang':<4} {'chars':>6} {'~tokens':>8} {'vs full':>8}")
    for style, language, chars, tokens in rows:
        print(f"{style:<8} {language:<4} {chars:>6} {tokens:>8} {chars / full[language]:>8.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
