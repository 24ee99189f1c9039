"""What a reader sees of Markdown that the dashboard escaped (ui/safe_text.literal).

AppTest reports an element's Markdown source; untrusted text in it is backslash-escaped
(``<`` as ``&lt;``) and its line breaks are hard breaks. Tests that look for such text
compare what shows.
"""

from __future__ import annotations

import re

__all__ = ["shown"]

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def shown(source: str) -> str:
    """``source`` with its backslash escapes undone and hard line breaks as plain ones."""
    return _ESCAPE.sub(r"\1", source.replace("  \n", "\n")).replace("&lt;", "<")
