"""Labels of the plan library: the Templates page, the Plan page's offer and its save box.

Kept apart from :mod:`ui.i18n` (which merges them into its one table); each entry is
``key: (English, 中文)``.
"""

from __future__ import annotations

__all__ = ["TEMPLATES_TEXT"]

TEMPLATES_TEXT: dict[str, tuple[str, str]] = {
    "nav_templates": ("Templates", "计划模板"),
    "templates_title": ("Plan templates", "计划模板"),
    "templates_caption": ("Plans saved for reuse: the values their request gave are "
                          "parameters, filled in when a plan starts from one.",
                          "保存下来复用的计划：原请求中的具体值成为参数，从模板开始时再填入。"),
    "templates_empty": ("No templates yet: save a plan from the Plan page (Save as template) "
                        "or a run with python -m core templates save RUN_ID --name NAME.",
                        "还没有模板：在计划页点击“保存为模板”，或用 python -m core templates "
                        "save RUN_ID --name NAME 保存一次运行的计划。"),
    "templates_count": ("{count} template(s).", "共 {count} 个模板。"),
    "template_meta": ("saved by {saved_by} at {created} · from run {run_id}",
                      "由 {saved_by} 于 {created} 保存 · 来自运行 {run_id}"),
    "template_parameters": ("Parameters: {parameters}", "参数：{parameters}"),
    "template_no_parameters": ("No parameters: the plan runs as it was saved.",
                               "没有参数：计划按保存时的样子运行。"),
    "template_show_plan": ("Show the plan ({steps} steps)", "查看计划（{steps} 个步骤）"),
    "template_delete": ("Delete", "删除"),
    "template_deleted": ("Deleted template {name}.", "已删除模板 {name}。"),
    "template_fits": ("A saved plan fits: **{name}** ({score} alike). Start from it "
                      "instead of planning anew — no model call.",
                      "有一个已保存的计划适用：**{name}**（相似度 {score}）。可以直接从它开始，"
                      "无需重新规划，不调用大模型。"),
    "template_use": ("Start from this plan", "从这个计划开始"),
    "template_param": ("{name} (was {example})", "{name}（原值 {example}）"),
    "template_save": ("Save as template", "保存为模板"),
    "template_name": ("Template name", "模板名称"),
    "template_name_help": ("Letters, digits, - or _ (for example refund-check).",
                           "可用字母（含中文）、数字、- 或 _。"),
    "template_save_confirm": ("Save", "保存"),
    "template_saved": ("Saved template {name} with parameters: {parameters}.",
                       "已保存模板 {name}，参数：{parameters}。"),
}
