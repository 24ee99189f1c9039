"""An answer in the request's language: one rewrite when a model answered in another.

Small models drift into the language of what they read: asked in Chinese, the local
model read English tool results and answered in English. A rewrite costs one call and
only happens when the answer's language differs from the request's, for the models that
get the workarounds for weak ones (core.llm.providers.weak_model_checks).
"""

from __future__ import annotations

import logging
from typing import Protocol

from core.base.language import Language, written_in
from core.base.usage import Usage
from core.llm.client import ChatModel
from core.llm.providers import weak_model_checks
from core.prompts.execution import LANGUAGE_NAMES, LANGUAGE_REWRITE_SYSTEM

__all__ = ["in_language"]

logger = logging.getLogger(__name__)


class _UsageHolder(Protocol):
    usage: Usage


def in_language(model: ChatModel, text: str, language: Language, tally: _UsageHolder) -> str:
    """``text`` if it is written in ``language`` (or ``model`` gets no workarounds for weak
    models); else the model's rewrite of it in that language (kept only if it is one), with
    the call's usage added to ``tally``."""
    if not text.strip() or written_in(text, language) or not weak_model_checks(model):
        return text
    system = LANGUAGE_REWRITE_SYSTEM.format(language=LANGUAGE_NAMES.get(language, language))
    reply = model.chat([{"role": "system", "content": system},
                        {"role": "user", "content": text}], role="executor", tools=None)
    tally.usage = tally.usage + reply.usage
    rewritten = (reply.content or "").strip()
    if rewritten and written_in(rewritten, language):
        return rewritten
    logger.info("the rewrite into %s was not in %s; the answer stays as written",
                language, language)
    return text
