"""Labels of the plan page's step panel and its argument form (en, 中文).

Kept apart from :mod:`ui.i18n` (which merges them into its one table) to keep that
module short; each entry is ``key: (English, 中文)``.
"""

from __future__ import annotations

__all__ = ["PLAN_PANEL_TEXT"]

PLAN_PANEL_TEXT: dict[str, tuple[str, str]] = {
    "panel_title": ("Step {id}", "步骤 {id}"),
    "panel_title_none": ("Step", "步骤"),
    "panel_none": ("Click a step in the graph, or pick one under the table, to edit it here.",
                   "点击图中的步骤，或在表格下方选择一个步骤，即可在这里编辑。"),
    "panel_description": ("Description", "描述"),
    "panel_tool": ("Tool", "工具"),
    "panel_tool_help": ("A tool from the catalogue, or no tool: the model reasons over the "
                        "results of the dependencies.",
                        "从工具目录中选择；选择“无工具”时由模型根据所依赖步骤的结果进行推理。"),
    "panel_tool_server": (":material/dns: From MCP server {server}",
                          ":material/dns: 来自 MCP 服务器 {server}"),
    "panel_args": ("Arguments", "参数"),
    "panel_args_none": ("{tool} takes no arguments.", "{tool} 不需要参数。"),
    "panel_args_reasoning": ("A reasoning step has no arguments.", "推理步骤没有参数。"),
    "panel_required": ("required", "必填"),
    "panel_optional": ("optional", "可选"),
    "panel_required_help": ("Required: left empty, the model fills it in at run time "
                            "(offline, type it in).",
                            "必填：留空时由模型在运行时补上（离线时请手动填写）。"),
    "panel_default": ("default: {value}", "默认：{value}"),
    "panel_refs_help": ("A result can be typed in as a reference: {refs}",
                        "也可以填写对结果的引用：{refs}"),
    "panel_ref_placeholder": ("or use a result…", "或引用某个结果…"),
    "panel_ref_value": ("(a value typed above)", "（使用上面填写的值）"),
    "panel_ref_label": ("Result for {name}", "{name} 引用的结果"),
    "panel_from_ref": ("from {ref}", "来自 {ref}"),
    "panel_unknown_arg": ("{tool} does not take this argument: clear it to remove it.",
                          "{tool} 不接受这个参数：清空即可去掉它。"),
    "panel_depends": ("Depends on", "依赖"),
    "panel_depends_none": ("none: the step can start at once", "无：这一步可以立即开始"),
    "panel_depends_help": ("Steps whose results this step needs; it runs after them.",
                           "这一步需要其结果的步骤；它会在这些步骤之后执行。"),
    "panel_condition": ("Condition", "条件"),
    "panel_condition_help": ("Run the step only when this is true, e.g. "
                             "s1.status == 'delivered'; empty: always run.",
                             "只有条件为真时才执行这一步，例如 s1.status == 'delivered'；"
                             "留空表示总是执行。"),
    "panel_condition_none": ("none: the step always runs", "无：这一步总是执行"),
    "panel_condition_expression": ("Checked on the results of {ids}.", "根据 {ids} 的结果判断。"),
    "panel_condition_prose": ("Written in prose: the model judges it at run time (offline, "
                              "the step runs).",
                              "这是一句文字描述：运行时由模型判断（离线时这一步照常执行）。"),
    "panel_success": ("Success criteria", "成功标准"),
    "panel_success_help": ("How to tell the step worked, e.g. result.count > 0 or "
                           "'the order status is known'.",
                           "如何判断这一步成功，例如 result.count > 0 或“订单状态已知”。"),
    "panel_success_note": ("Checked on the result when it can be, otherwise by the model "
                           "(not offline).",
                           "能直接根据结果判断时直接判断，否则由模型判断（离线时不检查）。"),
}
