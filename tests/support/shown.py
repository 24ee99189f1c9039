"""What a reader sees: escaped Markdown (ui/safe_text.literal), the plan graphs' DOT, and
messages as a face words them.

AppTest reports an element's Markdown source; untrusted text in it is backslash-escaped
(``<`` as ``&lt;``) and its line breaks are hard breaks. Tests that look for such text
compare what shows. AppTest cannot draw the plan graph component (ui/graph_view); the DOT
it was given is in the element's arguments.
"""

from __future__ import annotations

import json
import re

from core.base.messages import Message, render

__all__ = ["graph_dots", "shown", "step_heads", "worded"]

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def shown(source: str) -> str:
    """``source`` with its backslash escapes undone and hard line breaks as plain ones."""
    return _ESCAPE.sub(r"\1", source.replace("  \n", "\n")).replace("&lt;", "<")


def graph_dots(node) -> list[str]:
    """The DOT of every plan graph (ui.graph_view.plan_graph) in ``node``: an AppTest or a block."""
    return [json.loads(element.proto.json_args)["dot"]
            for element in node.get("component_instance")
            if element.proto.component_name.endswith(".plan_graph")]


def step_heads(node) -> dict[str, str]:
    """Each step card's head line (ui.live_marks.step_head) in ``node``, by step id, as the
    browser shows it: "✓ s1 Completed · tool · MCP server time ⚠" and the description
    below."""
    heads = {}
    for element in node.get("bidi_component"):
        if element.proto.component_name.endswith("planboard_step_head"):
            data = json.loads(element.proto.json)
            tool = data["tool"] or data["no_tool"]
            heads[data["step"]] = (f"{data['icons'][data['status']]} {data['step']} "
                                   f"{data['words'][data['status']]} · {tool}"
                                   f"{data['after_tool']}\n{data['description']}")
    return heads


def worded(messages: list[Message], language: str = "en") -> list[str]:
    """The messages (a plan's problems, say) as a face words them in ``language``."""
    return [render(message, language) for message in messages]
