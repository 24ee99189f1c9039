"""The one translation table of the dashboard: every visible label in English and 中文."""

from __future__ import annotations

import logging

import streamlit as st

from ui.i18n_plan import PLAN_PANEL_TEXT
from ui.i18n_run import RUN_PAGE_TEXT
from ui.i18n_templates import TEMPLATES_TEXT

__all__ = ["LANGUAGES", "TEXT", "current_language", "t"]

logger = logging.getLogger(__name__)

LANGUAGES = {"en": "English", "zh": "中文"}

_RUN_STATUSES = {
    "planned": ("Planned", "已计划"),
    "running": ("Running", "运行中"),
    "waiting_confirmation": ("Waiting for confirmation", "等待确认"),
    "paused": ("Paused", "已暂停"),
    "completed": ("Completed", "已完成"),
    "failed": ("Failed", "失败"),
    "cancelled": ("Cancelled", "已取消"),
    "interrupted": ("Interrupted", "已中断"),
}
_STEP_STATUSES = {
    "pending": ("○ Pending", "○ 待执行"),
    "running": ("▶ Running", "▶ 执行中"),
    "completed": ("✓ Completed", "✓ 已完成"),
    "failed": ("✗ Failed", "✗ 失败"),
    "skipped": ("⏭ Skipped", "⏭ 已跳过"),
}
_EXPORT_LABELS = {
    "json": ("JSON", "JSON 记录"),
    "md": ("Markdown", "Markdown 报告"),
    "dot": ("DOT", "DOT 图"),
    "svg": ("SVG", "SVG 图"),
}

_PLAN_MODES = {
    "auto": ("Auto", "自动"),
    "plan": ("Plan", "规划"),
    "knowledge": ("Knowledge answer", "知识问答"),
    "direct": ("Direct", "直接处理"),
}
_CHECKPOINTS = {
    "rigid": ("Rigid (never replan)", "固定（从不重新规划）"),
    "on_failure": ("On failure", "失败时"),
    "adaptive": ("Adaptive", "自适应"),
    "every_step": ("Every step", "每一步"),
}

_PAIRS: dict[str, tuple[str, str]] = {
    # navigation and frame
    "nav_plan": ("Plan", "计划"),
    "nav_run": ("Run", "运行"),
    "nav_history": ("History", "历史"),
    "nav_tools": ("Tools", "工具"),
    "badge_offline": (":material/cloud_off: offline (no LLM)",
                      ":material/cloud_off: 离线（不用大模型）"),
    "badge_llm": (":material/smart_toy: LLM", ":material/smart_toy: 大模型"),
    # sidebar
    "language": ("Language", "语言"),
    "offline_mode": ("Offline mode", "离线模式"),
    "offline_mode_help": (
        "Plan with the rule-based offline planner and run tool steps without any LLM.",
        "用基于规则的离线规划器生成计划，工具步骤不调用大模型直接执行。"),
    "planner_offline": ("Planner: offline rules", "规划器：离线规则"),
    "planner_llm": ("Planner: {model} at {base_url}", "规划器：{model}（{base_url}）"),
    "reason_no_key": ("no API key is configured", "未配置 API 密钥"),
    "reason_offline_on": ("offline mode is on", "已开启离线模式"),
    "reason_no_key_forced": (
        "offline mode is off but there is no API key: add one in the sidebar",
        "离线模式已关闭，但没有 API 密钥：请在侧边栏填写"),
    "reason_llm": ("an API key is configured and offline mode is off",
                   "已配置 API 密钥且离线模式已关闭"),
    "settings_llm": ("Model provider", "模型服务"),
    "base_url": ("Provider base URL", "服务地址（Base URL）"),
    "base_url_help": ("Any OpenAI-compatible endpoint, e.g. https://api.openai.com/v1",
                      "任意兼容 OpenAI 的接口，例如 https://api.openai.com/v1"),
    "planner_model": ("Planner model", "规划模型"),
    "executor_model": ("Executor model", "执行模型"),
    "api_key": ("API key", "API 密钥"),
    "api_key_help": ("Kept only in this browser session; never saved to disk, logs or exports.",
                     "只保存在当前浏览器会话中，不会写入磁盘、日志或导出文件。"),
    "key_from_session": ("Using the key typed here (this session only).",
                         "使用此处填写的密钥（仅本次会话）。"),
    "key_from_env": ("Using OPENAI_API_KEY from the environment.", "使用环境变量 OPENAI_API_KEY。"),
    "key_none": ("No API key: plans and steps run offline.", "没有 API 密钥：计划和步骤离线运行。"),
    "settings_run": ("Run options", "运行选项"),
    "max_parallel": ("Max parallel steps", "最大并行步骤数"),
    "max_replans": ("Max replans", "最大重新规划次数"),
    "confirm_side_effects": ("Confirm side effects", "副作用操作需确认"),
    "confirm_side_effects_help": (
        "Ask before a step runs a tool that changes something (refunds, tickets, ...).",
        "执行会改变外部状态的工具（退款、工单等）前先征求确认。"),
    "checkpoint_policy": ("Checkpoint policy", "检查点策略"),
    "checkpoint_policy_help": (
        "When the plan may change while it runs: never (rigid), after a failure, after each "
        "step when a result changes the premise (adaptive), or after every step.",
        "运行中何时允许调整计划：从不（固定）、失败后、每步后按结果判断（自适应）、每步都重新规划。"),
    # plan page
    "plan_title": ("Plan", "计划"),
    "plan_caption": ("Describe a task, review the plan, approve it.",
                     "描述任务，审阅计划，批准执行。"),
    "request": ("Your request", "你的请求"),
    "request_placeholder": ("What should be done? e.g. look something up, and act on it if it "
                            "holds.",
                            "要做什么？例如：先查一下某件事，符合条件的话再去办理。"),
    "request_empty": ("Type a request first (or pick a scenario).",
                      "请先输入请求（或选择一个示例）。"),
    "gallery": ("Scenarios — click one to fill in the request:", "示例场景——点击即可填入请求："),
    "generate_plan": ("Generate plan", "生成计划"),
    "blank_plan": ("Start from a blank plan", "从空白计划开始"),
    "blank_goal": ("A plan written by hand", "手写的计划"),
    "planning_offline": ("Drafting the plan with the offline rules…", "正在用离线规则起草计划…"),
    "planning_llm": ("Asking the planner model…", "正在请求规划模型…"),
    "request_unservable": ("Nothing to run: no tool can serve this request, so no run was "
                           "recorded.",
                           "无法执行：没有工具能处理这个请求，因此没有记录任何运行。"),
    "plan_empty": ("No plan yet: generate one or start from a blank plan.",
                   "还没有计划：生成一个，或从空白计划开始。"),
    "goal": ("Goal", "目标"),
    "plan_table": ("Steps", "步骤"),
    "plan_graph": ("Dependency graph", "依赖关系图"),
    "graph_legend": (
        "Colours show status · dashed = conditional (◇ its condition) · ⚠ red border = side "
        "effects · bold arrows = critical path",
        "颜色表示状态 · 虚线框 = 条件步骤（◇ 后是条件） · ⚠ 红框 = 有副作用 · 粗箭头 = 关键路径"),
    "col_id": ("ID", "编号"),
    "col_description": ("Description", "描述"),
    "col_tool": ("Tool", "工具"),
    "col_args": ("Args (JSON)", "参数（JSON）"),
    "col_args_help": ('A JSON object, e.g. {"name": "value"}; "{{s1.field}}" uses a result.',
                      'JSON 对象，如 {"参数": "取值"}；"{{s1.field}}" 引用前面步骤的结果。'),
    "col_depends": ("Depends on", "依赖"),
    "col_depends_help": ("Step ids separated by commas, e.g. s1, s2",
                         "用逗号分隔的步骤编号，例如 s1, s2"),
    "col_condition": ("Condition", "条件"),
    "col_condition_help": ("Run only when true, e.g. s1.status == 'delivered'",
                           "为真时才执行，例如 s1.status == 'delivered'"),
    "col_success": ("Success criteria", "成功标准"),
    "no_tool": ("— none (reasoning) —", "— 无（推理）—"),
    "step_pick": ("Step", "步骤"),
    "move_up": ("Up", "上移"),
    "move_down": ("Down", "下移"),
    "delete_step": ("Delete", "删除"),
    "add_step": ("Add", "添加"),
    "metric_steps": ("Steps", "步骤数"),
    "metric_critical_path": ("Critical path", "关键路径"),
    "metric_critical_path_help": ("Steps on the longest dependency chain.",
                                  "最长依赖链上的步骤数。"),
    "metric_llm_calls": ("Expected LLM calls", "预计大模型调用"),
    "metric_llm_calls_help": ("Calls the run is expected to make (planning not included).",
                              "执行预计需要的调用次数（不含规划）。"),
    "metric_llm_calls_offline": (
        "Offline: no LLM is called; a step that needs one fails with a clear message.",
        "离线：不调用大模型；需要大模型的步骤会失败并给出说明。"),
    "planner_warning": ("Planner: {warning}", "规划器提示：{warning}"),
    "problems_title": ("{count} problem(s) block approval:", "有 {count} 个问题，暂不能批准："),
    "plan_valid": ("The plan is valid.", "计划校验通过。"),
    "approve_run": ("Approve & run", "批准并运行"),
    "approve_help": ("Start the run in the background and follow it on the Run page.",
                     "在后台开始运行，并在运行页面跟踪进度。"),
    "approve_blocked": ("Fix the problems listed above first.", "请先修复上面列出的问题。"),
    "plan_mode": ("How to handle the request", "处理方式"),
    "plan_mode_help": (
        "auto lets the router decide; knowledge answers from the documents, direct makes a "
        "few tool calls, plan drafts a plan to review.",
        "自动：由路由器决定；知识问答：检索文档直接回答；直接处理：少量工具调用；规划：先起草计划再审阅。"),
    "route_chosen": ("Mode: {mode} — {reason}", "处理方式：{mode} —— {reason}"),
    "reset_demo": ("Reset demo data", "重置演示数据"),
    "reset_demo_help": (
        "Recreate {what}, as `python -m core demo reset` does: {restores}.",
        "重新生成{what}（同 `python -m core demo reset`）：{restores}。"),
    "reset_demo_ask": ("Reset every demo database? Refunds made in demos are lost.",
                       "确定重置所有演示数据库吗？演示中创建的退款将丢失。"),
    "reset_demo_confirm": ("Yes, reset", "确定重置"),
    "reset_demo_cancel": ("Cancel", "取消"),
    "reset_demo_done": ("Demo data reset: {restores}.", "演示数据已重置：{restores}。"),
    "routing": ("Deciding how to handle the request…", "正在判断如何处理请求…"),
    "clarify_title": ("A few questions before planning", "规划前需要确认几个问题"),
    "clarify_caption": ("The request is missing something the plan needs.",
                        "请求缺少计划所需的信息。"),
    "clarify_submit": ("Answer and plan", "回答并生成计划"),
    "clarify_empty": ("Answer at least one question (or edit the request).",
                      "请至少回答一个问题（或修改请求）。"),
    "lessons_used": ("Lessons from earlier runs used by the planner ({count})",
                     "规划时参考的历史经验（{count}）"),
    # run page
    "run_title": ("Run", "运行"),
    "run_caption": ("Live progress of one run.", "单次运行的实时进度。"),
    "run_none": ("No run selected: approve a plan, or open a run from the History page.",
                 "未选择运行：请先批准一个计划，或从历史页面打开一次运行。"),
    "go_history": ("Open the history", "打开历史"),
    "run_request": ("Request", "请求"),
    "run_meta": ("Run {run_id} · started {created} · {mode}",
                 "运行 {run_id} · 开始于 {created} · {mode}"),
    "run_model": ("model {model}", "模型 {model}"),
    "run_status": ("Status", "状态"),
    "run_progress": ("{parts} · {total} steps", "{parts} · 共 {total} 个步骤"),
    "run_pause": ("Pause", "暂停"),
    "run_resume": ("Resume", "继续"),
    "run_cancel": ("Cancel", "取消"),
    "steps": ("Steps", "步骤"),
    "card_condition": ("Condition: {condition}", "条件：{condition}"),
    "card_waiting": ("This step changes something outside PlanBoard. Run it?",
                     "此步骤会改变外部状态，是否执行？"),
    "card_in_doubt": ("This step was calling its tool when the run stopped: the call may "
                      "already have happened. Run it again?",
                      "运行中断时此步骤正在调用工具：这次调用可能已经生效。要再次执行吗？"),
    "card_server": ("MCP server {server}", "MCP 服务器 {server}"),
    "confirm": ("Confirm", "确认"),
    "reject": ("Reject", "拒绝"),
    "version_wait": ("Plan version {version} adds or changes side-effecting steps that the "
                     "approved plan (v{approved}) did not have: {steps}. Approve the new "
                     "version?",
                     "计划版本 {version} 新增或修改了已批准计划（v{approved}）中没有的副作用步骤："
                     "{steps}。批准新版本吗？"),
    "approve_version": ("Approve the new version", "批准新版本"),
    "reject_version": ("Reject its new side effects", "拒绝新增的副作用"),
    "card_args": ("Arguments", "参数"),
    "card_result": ("Result", "结果"),
    "card_duration": ("{seconds} s", "{seconds} 秒"),
    "card_usage": ("{calls} LLM calls · {tokens} tokens", "{calls} 次大模型调用 · {tokens} 个词元"),
    "answer": ("Answer", "答案"),
    "answer_pending": ("The answer appears here when the run finishes.",
                       "运行结束后答案会显示在这里。"),
    "answer_none": ("This run finished without an answer.", "此次运行没有产生答案。"),
    "usage_calls": ("LLM calls", "大模型调用"),
    "usage_prompt": ("Prompt tokens", "提示词元"),
    "usage_completion": ("Completion tokens", "生成词元"),
    "usage_wall": ("Wall time", "耗时"),
    "replans": ("Plan versions", "计划版本"),
    "replans_none": ("One version: the run kept its first plan.",
                     "只有一个版本：一直使用最初的计划。"),
    "replan_title": ("Version {old} → {new}", "版本 {old} → {new}"),
    "replan_reason": ("Why: {reason}", "原因：{reason}"),
    "replan_same": ("Same steps (only runtime state changed).", "步骤相同（只有运行状态变化）。"),
    "events": ("Event log", "事件日志"),
    "event_time": ("Time", "时间"),
    "event_kind": ("Event", "事件"),
    "event_step": ("Step", "步骤"),
    "event_data": ("Details", "详情"),
    "card_success_met": ("Success check met: {reason}", "成功标准已满足：{reason}"),
    "card_success_missed": ("Success check missed: {reason}", "未满足成功标准：{reason}"),
    "card_failure_fatal": ("Fatal failure: steps that depend on it cannot run.",
                           "致命失败：依赖它的步骤无法执行。"),
    "card_failure_ignorable": ("Ignorable failure: recorded, the run goes on.",
                               "可忽略的失败：已记录，运行继续。"),
    "reflections": ("Reflections", "反思"),
    "reflection_title": ("Reflection after attempt {attempt}", "第 {attempt} 次尝试后的反思"),
    "reflection_root_cause": ("Root cause: {text}", "根本原因：{text}"),
    "reflection_lesson": ("Lesson: {text}", "经验：{text}"),
    "reflection_retry_yes": ("Retry advised: {hint}", "建议重试：{hint}"),
    "reflection_retry_no": ("No retry advised.", "不建议重试。"),
    "followup_title": ("Follow-up", "追加请求"),
    "followup_text": ("Add to this request", "补充请求"),
    "followup_placeholder": ("e.g. Also check whether you have new earphones.",
                             "例如：另外帮我看看有没有新款耳机。"),
    "followup_submit": ("Extend the plan and run", "扩展计划并运行"),
    "followup_help": ("Completed steps keep their results; only the new steps run.",
                      "已完成的步骤保留结果，只执行新增步骤。"),
    "followup_empty": ("Type what to add first.", "请先输入要补充的内容。"),
    "followup_started": ("Version {version} is running with the follow-up.",
                         "已生成版本 {version}，正在执行追加请求。"),
    "run_unknown": ("There is no run {run_id}. Open one from the history.",
                    "没有编号为 {run_id} 的运行。请从历史中打开一个。"),
    "source_failure": ("replan after a failure", "失败后重新规划"),
    "source_checkpoint": ("checkpoint", "检查点调整"),
    "source_retry": ("retry after reflection", "反思后重试"),
    "source_follow-up": ("follow-up", "追加请求"),
    "source_manual": ("manual edit", "手动编辑"),
    "source_draft": ("first plan", "初始计划"),
    # event log: one label per core.execution.events.EventKind
    "kind_run_started": ("run started", "开始运行"),
    "kind_step_started": ("step started", "步骤开始"),
    "kind_step_completed": ("step completed", "步骤完成"),
    "kind_step_failed": ("step failed", "步骤失败"),
    "kind_step_skipped": ("step skipped", "步骤跳过"),
    "kind_waiting_confirmation": ("waiting for confirmation", "等待确认"),
    "kind_confirmed": ("confirmed", "已确认"),
    "kind_rejected": ("rejected", "已拒绝"),
    "kind_replanned": ("new plan version", "新的计划版本"),
    "kind_reflected": ("reflected", "已反思"),
    "kind_paused": ("paused", "已暂停"),
    "kind_resumed": ("resumed", "已继续"),
    "kind_cancelled": ("cancelled", "已取消"),
    "kind_interrupted": ("interrupted", "已中断"),
    "kind_step_reset": ("step reset after a crash", "崩溃后步骤重置"),
    "kind_run_finished": ("run finished", "运行结束"),
    "diff_changed": ("changed: {fields}", "修改：{fields}"),
    # history page
    "history_title": ("History", "历史"),
    "history_caption": ("Every run, newest first.", "所有运行，最新的在前。"),
    "history_filter": ("Status", "状态"),
    "history_all": ("All", "全部"),
    "history_empty": ("No runs yet.", "还没有运行记录。"),
    "history_none_with_status": ("No run has this status.", "没有处于这个状态的运行。"),
    "history_pick": ("Run", "运行"),
    "history_open": ("Open", "打开"),
    "col_run": ("Run", "运行"),
    "col_status": ("Status", "状态"),
    "col_request": ("Request", "请求"),
    "col_created": ("Started", "开始时间"),
    "export": ("Export", "导出"),
    "export_no_dot": ("SVG needs the Graphviz 'dot' program, which is not installed.",
                      "导出 SVG 需要安装 Graphviz 的 dot 程序（当前未安装）。"),
    # lessons page
    "nav_lessons": ("Lessons", "经验教训"),
    "lessons_title": ("Lessons", "经验教训"),
    "lessons_caption": ("What earlier runs learned; enabled lessons guide later plans.",
                        "历史运行总结的经验；启用的经验会用于之后的规划。"),
    "lessons_empty": ("No lessons yet: a run that fails or needs a replan leaves one.",
                      "还没有经验：失败或需要重新规划的运行会留下经验。"),
    "lessons_count": ("{count} lesson(s), {enabled} enabled.",
                      "共 {count} 条经验，{enabled} 条已启用。"),
    "lesson_text": ("Lesson", "经验"),
    "lesson_meta": ("#{id} · created {created} · tools: {tools}",
                    "#{id} · 创建于 {created} · 工具：{tools}"),
    "lesson_no_tools": ("none", "无"),
    "lesson_enabled": ("Enabled", "启用"),
    "lesson_save": ("Save", "保存"),
    "lesson_delete": ("Delete", "删除"),
    "lesson_open_run": ("Open run {run_id}", "打开运行 {run_id}"),
    "lesson_no_run": ("Added by hand (no run).", "手动添加（无来源运行）。"),
    "lesson_saved": ("Lesson #{id} saved.", "经验 #{id} 已保存。"),
    "lesson_deleted": ("Lesson #{id} deleted.", "经验 #{id} 已删除。"),
    "lesson_toggled_on": ("Lesson #{id} enabled.", "经验 #{id} 已启用。"),
    "lesson_toggled_off": ("Lesson #{id} disabled.", "经验 #{id} 已停用。"),
    # tools page
    "tools_title": ("Tools", "工具"),
    "tools_caption": ("What the agent may use.", "智能体可以使用的工具。"),
    "tools_count": ("{count} tools registered; ⚠ marks tools with side effects.",
                    "已注册 {count} 个工具；⚠ 表示有副作用。"),
    "tool_side_effect": ("⚠ Has side effects (changes something outside PlanBoard).",
                         "⚠ 有副作用（会改变外部状态）。"),
    "tool_read_only": ("Read-only.", "只读。"),
    "tool_try": ("Try a tool", "试用工具"),
    "tool_pick": ("Tool", "工具"),
    "tool_args": ("Arguments (JSON object)", "参数（JSON 对象）"),
    "tool_side_effect_ok": ("I understand this tool has side effects.", "我知道此工具有副作用。"),
    "tool_run": ("Run tool", "运行工具"),
    "tool_bad_json": ("The arguments are not valid JSON: {error}", "参数不是合法的 JSON：{error}"),
    "tool_not_object": ('The arguments must be a JSON object, e.g. {"name": "value"}.',
                        '参数必须是 JSON 对象，例如 {"参数": "取值"}。'),
    "tool_ok": ("The tool answered:", "工具返回："),
    "tool_trial_run": ("Recorded as run {run_id}", "已记录为运行 {run_id}"),
    "tool_sources": ("Where the tools come from", "工具来源"),
    "tool_catalogue": ("Tools", "工具列表"),
    "source_line": ("**{name}** · {kind} · {state} · {count} tools",
                    "**{name}** · {kind} · {state} · {count} 个工具"),
    "source_toolset": ("toolset", "工具集"),
    "source_mcp": ("MCP server ({transport})", "MCP 服务器（{transport}）"),
    "source_loaded": ("loaded", "已加载"),
    "source_running": ("running", "运行中"),
    "source_starting": ("starting", "启动中"),
    "source_stopped": ("stopped (starts on its next call)", "已停止（下次调用时启动）"),
    "source_failed": ("failed", "失败"),
    "tool_from_server": ("from MCP server {server}", "来自 MCP 服务器 {server}"),
    "tool_from_toolset": ("from toolset {toolset}", "来自工具集 {toolset}"),
}
_PAIRS.update({  # plan editing: safe edits, undo, the plan page's request (issue 12)
    "undo_edit": ("Undo", "撤销"),
    "undo_edit_help": ("Go back to the plan as it was before the last edit (a delete, move, "
                       "add or table edit).",
                       "回到上一次编辑（删除、移动、添加或表格修改）之前的计划。"),
    "tool_none_reasoning": ("no tool (reasoning)", "无工具（推理）"),
    "edit_notes": ("The last edit also changed:", "上一次编辑还改动了："),
    "critical_path_cycle": ("— (cycle: {ids})", "—（循环：{ids}）"),
    "critical_path_cycle_help": (
        "A dependency cycle has no longest chain: remove one link of the cycle drawn in red.",
        "循环依赖没有最长链：请去掉红色循环中的一条依赖。"),
    "generate_help_offline": (
        "Drafts a plan with the built-in offline rules, which you can then edit; no model is "
        "called.",
        "用内置的离线规则起草计划，之后可以修改；不调用模型。"),
    "generate_help_llm": ("Routes the request and drafts a plan with {model}.",
                          "判断请求类型，并用 {model} 起草计划。"),
    "goal_full_request": ("The whole request ({count} characters)",
                          "完整请求（{count} 个字符）"),
    "graph_legend_cycle": ("red arrows = dependency cycle", "红色箭头 = 循环依赖"),
    # refining a plan with a sentence
    "refine_label": ("Tell the planner what to change", "告诉规划器要改什么"),
    "refine_placeholder": ("e.g. also check the return policy; drop the refund",
                           "例如：再查一下退货政策；不要退款"),
    "refine_button": ("Refine the plan", "修改计划"),
    "refine_help": ("The planner revises this plan as you say; the steps it keeps keep their "
                    "ids and your edits. You see what changed before you approve.",
                    "规划器按你说的修改这个计划；保留的步骤保留编号和你的修改。批准前会显示改动。"),
    "refine_working": ("Refining the plan…", "正在修改计划…"),
    "refine_changes": ("What the refinement changed", "这次修改改动了什么"),
})
_PAIRS.update(RUN_PAGE_TEXT)
_PAIRS.update(PLAN_PANEL_TEXT)
_PAIRS.update(TEMPLATES_TEXT)
_PAIRS.update({f"run_status_{k}": v for k, v in _RUN_STATUSES.items()})
_PAIRS.update({f"status_{k}": v for k, v in _STEP_STATUSES.items()})
_PAIRS.update({f"export_{k}": v for k, v in _EXPORT_LABELS.items()})
_PAIRS.update({f"mode_{k}": v for k, v in _PLAN_MODES.items()})
_PAIRS.update({f"checkpoint_{k}": v for k, v in _CHECKPOINTS.items()})

TEXT: dict[str, dict[str, str]] = {
    key: {"en": en, "zh": zh} for key, (en, zh) in _PAIRS.items()
}


def current_language() -> str:
    """The language chosen in the sidebar ("en" or "zh")."""
    language = st.session_state.get("language", "en")
    return language if language in LANGUAGES else "en"


def t(key: str, **fmt: object) -> str:
    """The label ``key`` in the session's language, formatted with ``fmt``."""
    entry = TEXT.get(key)
    if entry is None:
        logger.warning("no translation for %r", key)
        return key
    text = entry[current_language()]
    return text.format(**fmt) if fmt else text
