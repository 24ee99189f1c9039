"""Message codes: what core tells a person, as a code and parameters worded in en or 中文.

An error or a recorded reason carries a :class:`Message` (``code`` + ``params``); its
English wording is what ``str()`` of the error, logs and stored records hold, and
:func:`render` words it in the reader's language: the dashboard's, or the command line's.
A parameter may itself be a Message, a :class:`Both` (a value the data holds in both
languages, e.g. an order status), or a list of them (joined the language's way). The
wordings live in :mod:`core.base.message_texts`, one entry per code.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Union

from pydantic import BaseModel, Field

from core.base.language import Language
from core.base.message_texts import TEXTS

__all__ = ["TEXTS", "Both", "Message", "joined", "json_error", "msg", "recorded", "render"]

logger = logging.getLogger(__name__)

# the punctuation of each language: between the parts of a message, between listed items,
# around an aside
_SEPARATOR = {"en": "; ", "zh": "；"}
_LIST = {"en": ", ", "zh": "、"}
_ASIDE = {"en": (" (", ")"), "zh": ("（", "）")}


class Both(BaseModel):
    """A value worded in both languages by the data itself (a status, a product name)."""

    en: str
    zh: str

    def word(self, language: str) -> str:
        """The value in ``language``."""
        return self.zh if language == "zh" else self.en


Item = Union[str, int, float, bool, None, "Message", Both]
Param = Union[Item, list[Item]]  # noqa: UP007


class Message(BaseModel):
    """A code from the catalogue and the values its wording needs."""

    code: str
    params: dict[str, Param] = Field(default_factory=dict)

    def __str__(self) -> str:
        return render(self, "en")


Message.model_rebuild()


def msg(code: str, **params: Any) -> Message:
    """The message ``code`` with ``params``; a value of another type is kept as its text."""
    return Message(code=code, params={k: _param(v) for k, v in params.items()})


# what json's decoder says (its message's opening) → the message code that words it
_JSON_ERRORS = (
    ("Unterminated string", "json.unterminated_string"),
    ("Invalid control character", "json.control_character"),
    ("Invalid \\", "json.bad_escape"),
    ("Expecting value", "json.expecting_value"),
    ("Expecting property name", "json.expecting_name"),
    ("Expecting ':'", "json.expecting_colon"),
    ("Expecting ','", "json.expecting_comma"),
    ("Extra data", "json.extra_data"),
)


def json_error(exc: json.JSONDecodeError) -> Message:
    """What is wrong with JSON a person typed, and where, as a message: the decoder's own
    text is English only and ends in "at", which a face's "at column …" doubled. The line is
    named only when the text has more than one."""
    where = (msg("json.where_line", line=exc.lineno, column=exc.colno)
             if "\n" in exc.doc else msg("json.where_column", column=exc.colno))
    code = next((code for opening, code in _JSON_ERRORS if exc.msg.startswith(opening)),
                "json.other")
    return msg(code, where=where)


def recorded(raw: object) -> Message | None:
    """A message a record holds as data (``{"code": ..., "params": ...}``), or None when it
    holds none or one this version cannot read."""
    if not isinstance(raw, dict):
        return None
    try:
        return Message.model_validate(raw)
    except ValueError:  # pydantic's ValidationError is one
        return None


def _param(value: Any) -> Any:
    if isinstance(value, Message | Both | str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [item if isinstance(item, Message | Both | str | int | float | bool)
                else str(item) for item in value]
    return str(value)


def render(item: Message | BaseException | str | None, language: Language | str) -> str:
    """``item`` in ``language``: a message by its code, an error by the message it carries
    (else its own text), a string as written."""
    lang = "zh" if language == "zh" else "en"
    if isinstance(item, BaseException):
        carried = getattr(item, "message", None)
        item = carried if isinstance(carried, Message) else str(item)
    if item is None or isinstance(item, str):
        return item or ""
    params = {k: _worded(v, lang) for k, v in item.params.items()}
    texts = TEXTS.get(item.code)
    if texts is not None:
        try:
            return (texts[1] if lang == "zh" else texts[0]).format(**params)
        except (KeyError, IndexError):  # its wording now needs a parameter it lacks
            pass
    # a record written by another version: show what it holds rather than fail the page
    logger.warning("no wording for message code %r with parameters %s", item.code,
                   sorted(params))
    return " ".join([item.code, *(str(value) for value in params.values())])


def joined(items: list[str], language: Language | str, *, parts: bool = False,
           aside: bool = False) -> str:
    """``items`` listed the way ``language`` writes a list ("a, b", "a、b"), or with
    ``parts`` the parts of one message ("a; b", "a；b"); with ``aside``, in the parentheses
    it writes after a sentence (" (a, b)", "（a、b）")."""
    lang = "zh" if language == "zh" else "en"
    listed = (_SEPARATOR if parts else _LIST)[lang].join(items)
    if not aside:
        return listed
    opening, closing = _ASIDE[lang]
    return f"{opening}{listed}{closing}"


def _worded(value: Any, lang: str) -> Any:
    if isinstance(value, Message):
        return render(value, lang)
    if isinstance(value, Both):
        return value.word(lang)
    if isinstance(value, list):
        return _SEPARATOR[lang].join(str(_worded(v, lang)) for v in value)
    return "" if value is None else value
