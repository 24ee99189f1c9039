"""The one translation table of the dashboard: every visible label in English and 中文.

One concept however long it grows: every label of every page in one table, so that a label
missing its other language is found in one place."""

from __future__ import annotations

import logging

import streamlit as st

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
    "hierarchical": ("Phases", "分阶段规划"),
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
    "read_ahead": ("Start read-only steps while planning", "规划时先执行只读步骤"),
    "read_ahead_help": (
        "While the planner writes the plan, steps that only read (no side effect, no input "
        "from another step) start at once; the approved plan uses their results when it makes "
        "the same call. Nothing that changes anything runs before you approve.",
        "规划器写计划时，只读且不依赖其他步骤的步骤会立即开始执行；批准后的计划若发起相同调用，"
        "直接使用其结果。任何会改变外部状态的操作都不会在您批准前执行。"),
    # a setting that widens what runs without asking takes a second act (ui.switches)
    "widen_confirm_side_effects_ask": (
        "Turn off confirmation of side effects? Steps that change something outside "
        "PlanBoard (refunds, emails, tickets, …) will then run without asking you first, in "
        "every run you approve from now on.",
        "要关闭副作用确认吗？关闭后，在您此后批准的每次运行中，会改变外部状态的步骤（退款、"
        "邮件、工单等）都将直接执行，不再先征求您的确认。"),
    "widen_confirm_side_effects_yes": ("Turn confirmation off", "关闭确认"),
    "widen_confirm_side_effects_no": ("Keep confirming", "继续确认"),
    "widened_confirm_side_effects": ("Off: side effects run without asking you.",
                                     "已关闭：副作用操作将直接执行，不再询问您。"),
    "widen_read_ahead_ask": (
        "Start read-only steps while planning? Read-only tools will then be called while "
        "the planner writes the plan, before you review or approve it. Nothing that changes "
        "anything runs before you approve.",
        "要在规划时先执行只读步骤吗？开启后，规划器编写计划时就会调用只读工具，早于您审阅或批准"
        "计划。任何会改变外部状态的操作都不会在您批准前执行。"),
    "widen_read_ahead_yes": ("Start them while planning", "规划时先执行"),
    "widen_read_ahead_no": ("Keep it off", "保持关闭"),
    "widened_read_ahead": ("On: read-only tools are called before you approve the plan.",
                           "已开启：批准计划前就会调用只读工具。"),
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
    "planning_streamed": ("The planner is writing the plan ({count} written so far). Review "
                          "and approval open once it is finished and checked.",
                          "规划模型正在编写计划（已写出 {count} 个步骤）。"
                          "计划写完并检查后即可审阅和批准。"),
    "planning_next_step": ("writing the next step…", "正在编写下一个步骤…"),
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
    "col_phase": ("Phase", "阶段"),
    "col_phase_help": ("The phase this step belongs to: pick another to move it there.",
                       "这一步所属的阶段：选择另一个阶段即可把它移过去。"),
    "phase_group": ("{icon} {phase} · {title} — {count} step(s)",
                    "{icon} {phase} · {title} — {count} 个步骤"),
    "phase_group_pending": ("{icon} {phase} · {title} — expanded into steps when reached",
                            "{icon} {phase} · {title} — 运行到这个阶段时再展开成步骤"),
    "phase_group_none": ("Steps without a phase", "没有所属阶段的步骤"),
    "phase_no_steps": ("No steps yet: the planner writes them when the run reaches this "
                       "phase, with the results of the phases before it in view.",
                       "还没有步骤：运行到这个阶段时，规划器会参考之前各阶段的结果再写出步骤。"),
    "phase_after": ("Comes after {phases}.", "在 {phases} 之后。"),
    "phase_done_when": ("Done when: {text}", "完成标准：{text}"),
    "phase_strip": ("Phases", "阶段"),
    "phase_strip_running": ("{phase} running {done}/{total}", "{phase} 进行中 {done}/{total}"),
    "phase_strip_status": ("{phase} {status}", "{phase} {status}"),
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
    # an approval of a plan version that has a run already (pages/plan.py)
    "version_has_run": ("This version of the plan was approved already: its run is {run_id}. "
                        "No second run was started.",
                        "此版本的计划已经批准过：它的运行是 {run_id}。没有启动第二次运行。"),
    "open_version_run": ("Open run {run_id}", "打开运行 {run_id}"),
    "start_another_run": ("Start another run", "再启动一次运行"),
    "approve_help": ("Start the run in the background and follow it on the Run page.",
                     "在后台开始运行，并在运行页面跟踪进度。"),
    "approve_blocked": ("Fix the problems listed above first.", "请先修复上面列出的问题。"),
    # what a run does without asking (ui.safety_notes)
    "approve_confirmed": ("Side effects wait for your Confirm before they run: {steps}.",
                          "副作用步骤执行前会等待您确认：{steps}。"),
    "approve_unconfirmed": ("Confirmation of side effects is off: {steps} will run "
                            "without asking you.",
                            "副作用确认已关闭：{steps} 将直接执行，不会询问您。"),
    "approve_no_side_effects": ("No step of this plan has a side effect.",
                                "此计划中没有会产生副作用的步骤。"),
    "read_ahead_on": ("Read ahead is on: read-only steps start while the plan is written, "
                      "before you approve it.",
                      "预先执行已开启：编写计划时就会开始执行只读步骤，早于您批准计划。"),
    "run_confirmed": ("Side effects are confirmed: each waits for your Confirm before it "
                      "runs.",
                      "副作用需确认：每个副作用步骤都会等您确认后才执行。"),
    "run_unconfirmed": ("Confirmation of side effects is off for this run: they run without "
                        "asking.",
                        "本次运行已关闭副作用确认：副作用步骤将直接执行，不会询问。"),
    "run_new_versions_approved": ("New plan versions were approved beforehand: side effects "
                                  "they add run without asking.",
                                  "新的计划版本已预先批准：其中新增的副作用步骤将直接执行，"
                                  "不会询问。"),
    "run_read_ahead": ("This run uses read-only calls made while its plan was written.",
                       "本次运行使用了编写计划时已进行的只读调用结果。"),
    "rehearse": ("Rehearse", "排练"),
    "rehearse_help": ("Simulate each step from what its tool declares it returns, and list "
                      "what the run would meet. Calls no tool and records no run.",
                      "根据每个工具声明的返回结果模拟各个步骤，列出实际运行会遇到的问题。"
                      "不调用任何工具，也不记录运行。"),
    "rehearsal_problems": ("Rehearsal: {count} problem(s) the run would meet:",
                           "排练：运行时会遇到 {count} 个问题："),
    "rehearsal_clean": ("Rehearsal: no problem found.", "排练：没有发现问题。"),
    "rehearsal_side_effects": ("Side effects the run would cause (not called now):",
                               "运行时会产生的副作用（排练时未调用）："),
    "rehearsal_cost": ("Nothing was run. About {calls} LLM call(s) when it runs.",
                       "未执行任何步骤。实际运行约需 {calls} 次大模型调用。"),
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
    "review_decide": ("An agent waits for your decision on this plan.",
                      "有代理在等待你对这个计划的决定。"),
    "review_comment": ("Comment for the agent (needed to reject)",
                       "给代理的说明（拒绝时必填）"),
    "review_approve": ("Approve the plan", "批准计划"),
    "review_reject": ("Reject the plan", "拒绝计划"),
    "review_reject_needs_comment": ("Say why in the comment: the agent receives it.",
                                    "请在说明里写明原因：代理会收到它。"),
    "review_plan_intro": (
        "Edit the plan if it needs it, then approve it or reject it with a comment: the "
        "agent receives exactly the version you approve, and runs it itself.",
        "如有需要先编辑计划，再批准，或写明原因后拒绝：代理收到的正是你批准的版本，并由它自己执行。"),
    "review_approve_help": ("The agent receives exactly this version, your edits included.",
                            "代理收到的正是这个版本，包括你的修改。"),
    "review_effects": ("Steps with a side effect, as the agent declared its tools: {steps}. "
                       "The agent runs them once you approve.",
                       "按代理声明的工具，这些步骤有副作用：{steps}。你批准后代理就会执行它们。"),
    "review_no_effects": ("No step has a side effect, as the agent declared its tools.",
                          "按代理声明的工具，没有步骤会产生副作用。"),
    "review_unknown": ("There is no plan {review_id} sent for review. Open runs from the "
                       "history.", "没有编号为 {review_id} 的送审计划。请从历史中打开运行。"),
    "review_close": ("Back to my own plan", "返回我自己的计划"),
    "review_open_run": ("Open its run", "打开它的运行"),
    "review_edit_on_plan": ("Edit it on the Plan page", "在计划页面编辑"),
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
    "card_read_ahead": ("Read while the plan was written (the same call, made once).",
                        "在编写计划时已读取（相同调用，只执行一次）。"),
    "card_in_doubt": ("This step was calling its tool when the run stopped: the call may "
                      "already have happened. Run it again?",
                      "运行中断时此步骤正在调用工具：这次调用可能已经生效。要再次执行吗？"),
    "card_server": ("MCP server {server}", "MCP 服务器 {server}"),
    # a waiting step's arguments as its tool will get them (ui.run_view.render_decision)
    "card_arg_by_model": ("written by the model when the step runs",
                          "由大模型在步骤执行时填写"),
    "card_arg_unresolved": ("cannot be resolved yet: {reason}", "暂时无法解析：{reason}"),
    "card_confirm_waits": ("Confirm waits until every argument has its value; you can "
                           "reject the step.",
                           "所有参数都有确定的取值后才能确认；您可以拒绝此步骤。"),
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
    "source_rerun": ("re-run from a step", "从某一步重新运行"),
    "source_expansion": ("phase expanded", "展开阶段"),
    "source_phases": ("phase plan changed", "阶段计划变更"),
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
    "kind_tool_called": ("tool call reported", "报告了工具调用"),
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
    "col_agent": ("Agent", "代理"),
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
    "server_restart": ("Start it again", "重新启动"),
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
_PAIRS.update({  # plan editing: safe edits, undo, the plan page's request
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
    # plan variants side by side
    "variants": ("Compare variants", "对比方案"),
    "variants_count": ("How many variants", "方案数量"),
    "variants_help": ("The planner drafts each variant from its own angle (most parallel, "
                      "fewest tools, cheapest in model calls); you pick one and can still "
                      "edit it.",
                      "规划器从不同角度各起草一个方案（最大并行、最少工具、最少大模型调用）；"
                      "选定一个后仍可修改。"),
    "variants_draft": ("Draft the variants", "起草方案"),
    "variants_working": ("Drafting the variants…", "正在起草方案…"),
    "variants_title": ("Variants side by side", "方案对比"),
    "variant_title": ("Variant {number}", "方案 {number}"),
    "variant_offline": ("the offline planner", "离线规划器"),
    "variant_figures": ("{steps} steps · critical path {path} · about {calls} LLM call(s)",
                        "{steps} 个步骤 · 关键路径 {path} · 约 {calls} 次大模型调用"),
    "variant_side_effects": ("Side effects: {steps}", "副作用：{steps}"),
    "variant_no_side_effects": ("No side effects", "没有副作用"),
    "variant_problems": ("{count} problem(s):", "{count} 个问题："),
    "variant_no_problems": ("No problems found", "没有发现问题"),
    "variant_column_id": ("id", "编号"),
    "variant_column_step": ("step", "步骤"),
    "variant_column_tool": ("tool", "工具"),
    "variant_column_after": ("after", "依赖"),
    "variant_use": ("Use this plan", "采用这个方案"),
})
_PAIRS.update({  # the run page
    "run_progress_cancelled": ("Cancelled: {parts} · {total} steps",
                               "已取消：{parts} · 共 {total} 个步骤"),
    "progress_done": ("{n} done", "{n} 个完成"),
    "progress_skipped": ("{n} skipped", "{n} 个跳过"),
    "progress_failed": ("{n} failed", "{n} 个失败"),
    "progress_running": ("{n} running", "{n} 个执行中"),
    "progress_pending": ("{n} to go", "还剩 {n} 个"),
    "progress_not_run": ("{n} not run", "{n} 个未运行"),
    "skip_condition": ("Skipped: its condition was not met ({detail}).",
                       "已跳过：条件不满足（{detail}）。"),
    "skip_rejected": ("Skipped: a person rejected it.", "已跳过：被人工拒绝。"),
    "skip_cancelled": ("Not run: the run was cancelled.", "未运行：运行已取消。"),
    "skip_blocked": ("Skipped: it depends on failed step {detail}.",
                     "已跳过：所依赖的步骤 {detail} 失败。"),
    "skip_other": ("Skipped: {detail}", "已跳过：{detail}"),
    "card_table_rows": ("{rows} rows", "{rows} 行"),
    "present_open": ("Presentation view", "演示视图"),
    "present_open_help": ("The run full-screen for a projector: no sidebar, no editors.",
                          "适合投影的全屏视图：不显示侧边栏和编辑控件。"),
    "present_leave": ("Leave the presentation", "退出演示视图"),
    "present_now": ("Now", "当前"),
    "present_idle": ("No step is running.", "当前没有正在执行的步骤。"),
    "card_waiting_above": ("Waiting for your decision: Confirm or Reject at the top of the page.",
                           "等待你的决定：请在页面顶部确认或拒绝。"),
    "run_timeline_tab": ("Timeline", "时间线"),
    "timeline_seconds": ("Seconds from the start", "距开始的秒数"),
    "timeline_step": ("Step", "步骤"),
    "timeline_part": ("Part", "部分"),
    "timeline_marker": ("Marker", "标记"),
    "timeline_tally": ("{calls} LLM calls · {tokens} tokens",
                       "{calls} 次大模型调用 · {tokens} 个词元"),
    "rerun_from_here": ("Edit and re-run from here", "编辑并从这里重新运行"),
    "rerun_title": ("Re-run from {step}", "从 {step} 重新运行"),
    "rerun_caption": ("{step} and every step that depends on it run again; the other steps "
                      "keep their results and are not run again.",
                      "{step} 及所有依赖它的步骤会重新运行；其他步骤保留原结果，不会再次运行。"),
    "rerun_description": ("Description", "描述"),
    "rerun_tool": ("Tool", "工具"),
    "rerun_no_tool": ("(none: a reasoning step)", "（无：推理步骤）"),
    "rerun_args": ("Arguments (a JSON object)", "参数（JSON 对象）"),
    "rerun_condition": ("Condition (empty: always run)", "条件（留空：总是执行）"),
    "rerun_args_not_object": ("The arguments are not a JSON object; write them like "
                              "{\"name\": \"value\"}.",
                              "参数不是 JSON 对象；请写成 {\"name\": \"value\"} 这样的形式。"),
    "rerun_again": ("Runs again: {steps}. Kept with their results (not run again): {kept}.",
                    "重新运行：{steps}。保留原结果（不再运行）：{kept}。"),
    "rerun_side_effect": ("{step} calls {tool}, which has a side effect: approving the re-run "
                          "runs it again.",
                          "{step} 调用 {tool}，它会产生副作用：批准重新运行后它会再次执行。"),
    "rerun_submit": ("Approve and re-run", "批准并重新运行"),
    "rerun_close": ("Close", "关闭"),
    "rerun_started": ("Re-running from {step} as plan version {version}.",
                      "已从 {step} 重新运行，计划版本 {version}。"),
    "demo_pace": ("Demo pace (seconds before each step)", "演示节奏（每个步骤前等待的秒数）"),
    "demo_pace_help": ("Slows runs down so that a demo can follow the cards; 0 is off.",
                       "放慢运行，便于演示时看清每个步骤的变化；0 表示关闭。"),
})
_PAIRS.update({  # the plan page's step panel and its argument form
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
    "panel_phase": ("Phase", "阶段"),
    "panel_phase_help": ("The phase the step belongs to; it may depend on steps of this phase "
                         "and of the phases it comes after.",
                         "这一步所属的阶段；它只能依赖本阶段及其之前各阶段的步骤。"),
    "panel_success": ("Success criteria", "成功标准"),
    "panel_success_help": ("How to tell the step worked, e.g. result.count > 0 or "
                           "'the order status is known'.",
                           "如何判断这一步成功，例如 result.count > 0 或“订单状态已知”。"),
    "panel_success_note": ("Checked on the result when it can be, otherwise by the model "
                           "(not offline).",
                           "能直接根据结果判断时直接判断，否则由模型判断（离线时不检查）。"),
})
_PAIRS.update({  # plan templates: the offer, saving, the Templates page
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
    "template_use_here": ("Use this plan", "使用这个计划"),
    "template_open": ("Open on the Plan page to review", "在计划页打开并审阅"),
    "template_open_note": ("It opens as a draft on the Plan page: nothing runs until you "
                           "approve it there.",
                           "它会作为草稿在计划页打开：在那里批准之前不会运行任何步骤。"),
    "template_open_replaces": ("It replaces the plan now on the Plan page; nothing runs "
                               "until you approve it there.",
                               "它会替换计划页上现有的计划；在那里批准之前不会运行任何步骤。"),
    "template_param": ("{name} (was {example})", "{name}（原值 {example}）"),
    "template_save": ("Save as template", "保存为模板"),
    "template_name": ("Template name", "模板名称"),
    "template_name_help": ("Letters, digits, - or _ (for example refund-check).",
                           "可用字母（含中文）、数字、- 或 _。"),
    "template_save_confirm": ("Save", "保存"),
    "template_name_filled": ("(now in the name box: press Save to use it, or change it)",
                             "（已填入名称框：点击“保存”即可使用，也可以再修改）"),
    "template_saved": ("Saved template {name} with parameters: {parameters}.",
                       "已保存模板 {name}，参数：{parameters}。"),
    # ---- sign-in, roles and the audit log (ui.identity, pages/audit.py) ------------------
    "signin_title": ("Sign in to PlanBoard", "登录 PlanBoard"),
    "signin_caption": ("This PlanBoard is shared by a team: sign in to see its runs.",
                       "这个 PlanBoard 由团队共用：请登录后查看运行。"),
    "signin_button": ("Sign in", "登录"),
    "signout_button": ("Sign out", "退出登录"),
    "signin_no_role_title": ("No role yet", "尚无角色"),
    "signin_no_role": ("{person} has no role in PlanBoard; ask an admin to give you one.",
                       "{person} 在 PlanBoard 中没有角色；请管理员为你分配一个。"),
    "signed_in_as": ("Signed in as {person} · {role}", "已登录：{person} · {role}"),
    "role_viewer": ("viewer", "查看者"),
    "role_editor": ("editor", "编辑者"),
    "role_approver": ("approver", "审批人"),
    "role_admin": ("admin", "管理员"),
    "role_none": ("no role", "无角色"),
    "needs_role": ("Needs the {role} role.", "需要{role}角色。"),
    "viewer_plan": ("You can read runs and open the presentation view; planning needs the "
                    "editor role.", "你可以查看运行和演示视图；规划需要编辑者角色。"),
    "nav_audit": ("Audit", "审计"),
    "audit_title": ("Audit", "审计"),
    "audit_caption": ("Who did what: every approval, edit, confirmation, cancel and re-run, "
                      "with the person.",
                      "谁做了什么：每次批准、编辑、确认、取消和重跑，以及操作人。"),
    "audit_person": ("Person", "人员"),
    "audit_action": ("Action", "操作"),
    "audit_run": ("Run id", "运行 ID"),
    "audit_any": ("(any)", "（全部）"),
    "audit_none": ("Nothing recorded yet.", "还没有记录。"),
    "audit_cols": ("When|Person|How|Action|Run|Agent|Version|Step",
                   "时间|人员|方式|操作|运行|代理|版本|步骤"),
    "audit_roles": ("Roles given here", "在此分配的角色"),
    "audit_grant": ("Give a role", "分配角色"),
    "audit_grant_person": ("E-mail or OS user", "电子邮箱或系统用户"),
    "audit_grant_button": ("Give", "分配"),
    "audit_revoke_button": ("Take back", "收回"),
    "run_owner": ("Started by {person}", "发起人：{person}"),
    "run_acts": ("Who did what", "操作记录"),
})
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
