"""Untrusted text on the dashboard: what every face passes to Streamlit's Markdown elements.

``st.markdown``, ``st.caption``, ``st.info``/``warning``/``error``/``success``, expander
titles, widget labels and ``help=`` tooltips all render Markdown, and Markdown images are
fetched by the browser as soon as the page is drawn. So text that comes from a person, a
model or a tool (request, goal, step descriptions, conditions, results, answers, lessons,
reasons, errors) reaches them only through one of these:

- :func:`markdown` for text meant as Markdown (answers, text results): tables, lists,
  emphasis, code and links survive; images and raw HTML do not form.
- :func:`literal` for everything else: shown exactly as written, no markup at all.
- :func:`code` for a short value shown as inline code.

Plain-text elements (``st.text``, ``st.code``, ``st.json``, data frames, text inputs'
values) need none of this. See core/base/markup.py for how each form is made safe.
"""

from __future__ import annotations

from core.base.markup import code_span, literal_text, markdown_text

__all__ = ["code", "literal", "markdown"]


def markdown(text: object) -> str:
    """Untrusted Markdown, safe to render: no image, no HTML, no control characters."""
    return markdown_text(str(text))


def literal(text: object) -> str:
    """Untrusted text as Markdown that shows it exactly as written."""
    return literal_text(str(text))


def code(text: object) -> str:
    """Untrusted text (on one line) as an inline code span."""
    return code_span(str(text))
