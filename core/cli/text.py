"""The command line's own words in English and Chinese (PLANBOARD_LANG, else the locale)."""

from __future__ import annotations

import os

__all__ = ["cli_language", "say"]

_TEXT: dict[str, tuple[str, str]] = {
    "hook_no_plan": ("review-hook: the hook's input holds no plan ({reason}); the assistant "
                     "asks you itself.",
                     "review-hook：钩子的输入里没有计划（{reason}）；由助手自己询问你。"),
    "hook_undecided": ("review-hook: no decision on review {review_id} within {seconds} s; "
                       "the assistant asks you itself.",
                       "review-hook：送审 {review_id} 在 {seconds} 秒内没有决定；"
                       "由助手自己询问你。"),
    "hook_unreachable": ("review-hook: {reason}; the assistant asks you itself.",
                         "review-hook：{reason}；由助手自己询问你。"),
    "hook_refused": ("review-hook: PlanBoard refused the plan: {reason}; the assistant asks "
                     "you itself.",
                     "review-hook：PlanBoard 拒收了这个计划：{reason}；由助手自己询问你。"),
    "hook_sent": ("review-hook: the plan waits for review at {url}",
                  "review-hook：计划正在 {url} 等待审阅"),
    "roles_you": ("You are {person}, with the role {role}.", "你是 {person}，角色：{role}。"),
    "roles_off": ("Roles are not configured ({path} does not exist and none was given): "
                  "everyone may do everything.",
                  "未配置角色（{path} 不存在，也未分配过角色）：所有人都可以做任何操作。"),
    "role_granted": ("{person} now has the role {role}.", "{person} 现在的角色是 {role}。"),
    "role_revoked": ("{person}'s role was taken back.", "已收回 {person} 的角色。"),
    "role_none": ("{person} was given no role in the run store.",
                  "运行库中没有给 {person} 分配过角色。"),
    "execute": ("Execute? [y/N] ", "执行吗？[y/N] "),
    "execute_new": ("Execute the new steps? [y/N] ", "执行新增的步骤吗？[y/N] "),
    "not_executed": ("Not executed.", "未执行。"),
    "resume_ask": ("Resume run {run_id}? [y/N] ", "继续运行 {run_id} 吗？[y/N] "),
    "not_resumed": ("Not resumed.", "未继续。"),
    "side_effect_step": ("Step {step_id} calls {tool}, which has a side effect (it changes "
                         "something outside PlanBoard). Its arguments, as they will be sent:",
                         "步骤 {step_id} 调用 {tool}，它会产生副作用（改变 PlanBoard 之外的状态）。"
                         "将发送的参数："),
    "argument": ("  {name}: {value}{source}", "  {name}：{value}{source}"),
    "argument_by_model": ("  {name}: written by the model when the step runs",
                          "  {name}：由大模型在步骤执行时填写"),
    "argument_unresolved": ("  {name}: cannot be resolved yet: {reason}",
                            "  {name}：暂时无法解析：{reason}"),
    "no_arguments": ("  (no arguments)", "  （没有参数）"),
    "cannot_confirm": ("Step {step_id} is not run: an argument has no value yet, and what is "
                       "confirmed must be what runs.",
                       "步骤 {step_id} 不会执行：有参数还没有确定的取值，而确认的内容必须与执行的"
                       "内容一致。"),
    "plan_side_effects": ("Side effects: {steps}. Each asks you before it runs, showing what "
                          "it will send.",
                          "副作用步骤：{steps}。每一步执行前都会先询问您，并列出将发送的内容。"),
    "plan_side_effects_yes": ("Side effects: {steps}. --yes runs them without asking.",
                              "副作用步骤：{steps}。--yes 会不经询问直接执行它们。"),
    "plan_no_side_effects": ("No step has a side effect.", "没有会产生副作用的步骤。"),
    "run_step": ("Run step {step_id}? [y/N] ", "执行步骤 {step_id} 吗？[y/N] "),
    "in_doubt": ("Step {step_id} was calling its tool when the run stopped: this call may "
                 "already have happened.",
                 "步骤 {step_id} 在运行中断时正在调用工具：这次调用可能已经生效。"),
    "run_again": ("Run step {step_id} again? [y/N] ", "再次执行步骤 {step_id} 吗？[y/N] "),
    "new_version": ("Plan version {version} adds or changes side-effecting steps that the "
                    "approved plan (v{approved}) did not have: {steps}.",
                    "计划版本 {version} 新增或修改了已批准计划（v{approved}）中没有的副作用步骤："
                    "{steps}。"),
    "approve_version": ("Approve the new version? [y/N] ", "批准新版本吗？[y/N] "),
    "plan_cost": ("{steps} steps, critical path {path}, about {calls} LLM calls",
                  "{steps} 个步骤，关键路径 {path}，约 {calls} 次大模型调用"),
    "phases_later": ("{count} phase(s) ({phases}) get their steps when the run reaches them: "
                     "one planner call each, and a new version asks again before a side "
                     "effect it brings runs",
                     "{count} 个阶段（{phases}）在运行到时才展开成步骤：每个阶段调用一次规划器；"
                     "展开后若带来有副作用的步骤，会作为新版本再次请求批准"),
    "no_plan_needed": ("No plan needed: the {mode} workflow answers this ({reason}).",
                       "无需计划：由 {mode} 流程直接回答（{reason}）。"),
    "step_started": ("started", "开始"),
    "step_completed": ("completed", "完成"),
    "step_failed": ("failed", "失败"),
    "step_skipped": ("skipped", "跳过"),
    "step_detail": ("{status}: {detail}", "{status}：{detail}"),
    "event_replanned": ("replanned", "已重新规划"),
    "event_reflected": ("reflected", "已反思"),
    "event_waiting_confirmation": ("waiting for confirmation", "等待确认"),
    "event_confirmed": ("confirmed", "已确认"),
    "event_rejected": ("rejected", "已拒绝"),
    "event_paused": ("paused", "已暂停"),
    "event_resumed": ("resumed", "已继续"),
    "event_cancelled": ("cancelled", "已取消"),
    "run_completed": ("completed", "已完成"),
    "run_failed": ("failed", "失败"),
    "run_cancelled": ("cancelled", "已取消"),
    "run_paused": ("paused", "已暂停"),
    "run_ended": ("{status}: {answer}", "{status}：{answer}"),
    "step_how_direct": ("its tool was called with the plan's arguments",
                        "已按计划中的参数调用工具"),
    "step_how_forced_tool": ("its tool was called once the missing arguments were filled in",
                             "补全缺少的参数后调用了工具"),
    "step_how_react": ("worked out without a tool", "未调用工具，推理完成"),
    "step_how_synthesis": ("the answer was written from the earlier steps' results",
                           "已根据前面步骤的结果写出答案"),
    "step_how_condition": ("its condition was checked", "已检查其条件"),
    "plan_side_effect_mark": ("⚠ side effect", "⚠ 有副作用"),
    "plan_row_tool": ("tool:", "工具："),
    "plan_row_condition": ("runs if:", "条件："),
    "plan_row_after": ("after:", "依赖："),
    "plan_no_tool": ("none: the model writes this step", "无：这一步由大模型完成"),
    "planning_step": ("planning… {step_id}: {description}{tool}",
                      "规划中… {step_id}：{description}{tool}"),
    "warning": ("warning: {text}", "提示：{text}"),
    "check_changed": ("check {check} changed the plan (v{version}, {stage}): {detail}",
                      "检查 {check} 修改了计划（v{version}，{stage}）：{detail}"),
    "check_warned": ("check {check} warned (v{version}, {stage}): {detail}",
                     "检查 {check} 提示（v{version}，{stage}）：{detail}"),
    "check_sent_back": ("check {check} sent the planner's reply back (v{version}, {stage}): "
                        "{detail}",
                        "检查 {check} 退回了规划器的回复（v{version}，{stage}）：{detail}"),
    "error": ("error: {text}", "错误：{text}"),
    "no_answer": ("(no answer)", "（没有答案）"),
    "no_answer_read": ("No answer read; pass --yes to continue without asking.",
                       "没有读到回答；加上 --yes 可不经询问直接继续。"),
    "interrupted": ("interrupted", "已中断"),
    "interrupted_paused": ("interrupted: running steps finished and the run was paused; "
                           "resume with: python -m core resume {run_id}",
                           "已中断：正在执行的步骤已完成，运行已暂停；继续请用："
                           "python -m core resume {run_id}"),
    "demo_reset": ("Demo data recreated in {path}", "演示数据已重建：{path}"),
    "no_reset": ("No toolset in PLANBOARD_TOOLSETS offers a data reset; nothing was reset.",
                 "PLANBOARD_TOOLSETS 中没有提供数据重置的工具集；没有重置任何数据。"),
    "no_scenarios": ("No toolset in PLANBOARD_TOOLSETS offers scenarios.",
                     "PLANBOARD_TOOLSETS 中没有提供示例场景的工具集。"),
    "no_runs": ("No runs yet.", "还没有运行记录。"),
    "no_lessons": ("No lessons yet: they are written when a run fails or needs a replan.",
                   "还没有经验教训：运行失败或需要重新规划时才会记下。"),
    "pause_requested": ("Pause requested for run {run_id}; running steps finish first.",
                        "已请求暂停运行 {run_id}；正在执行的步骤会先完成。"),
    "wrote": ("Wrote {path}", "已写入 {path}"),
    "worker_ready": ("worker {name} serving runs from {database}, {concurrency} steps at once; "
                     "stop it with Ctrl-C or SIGTERM",
                     "工作进程 {name} 正在执行 {database} 中的运行，最多同时执行 {concurrency} "
                     "个步骤；用 Ctrl-C 或 SIGTERM 停止"),
    "worker_traces": ("traces of its runs go to {endpoint} (OpenTelemetry)",
                      "其运行的追踪数据发送到 {endpoint}（OpenTelemetry）"),
    "worker_stopped": ("worker {name} stopped; its unfinished runs continue when a worker "
                       "named {name} starts again",
                       "工作进程 {name} 已停止；名为 {name} 的工作进程再次启动时"
                       "会继续其未完成的运行"),
    "detached": ("run {run_id} submitted to the workers; follow it with: python -m core show "
                 "{run_id}",
                 "运行 {run_id} 已提交给工作进程；查看进度：python -m core show {run_id}"),
    "detached_request": ("run {run_id} submitted to the workers, which draft its plan and run "
                         "it; follow it with: python -m core show {run_id}",
                         "运行 {run_id} 已提交给工作进程，由它们制定计划并执行；查看进度："
                         "python -m core show {run_id}"),
    "still_running": ("stopped following; run {run_id} goes on in the workers: "
                      "python -m core show {run_id}",
                      "已停止跟踪；运行 {run_id} 仍在工作进程中继续：python -m core show {run_id}"),
    "recover_none": ("worker {name} has no unfinished runs", "工作进程 {name} 没有未完成的运行"),
    "recover_ask": ("Is worker {name} gone for good (stopped everywhere, never to restart)? "
                    "Its {count} unfinished run(s) then go to the live workers. [y/N] ",
                    "工作进程 {name} 是否已永久停止（各处都不再运行，也不会重启）？若是，它的 "
                    "{count} 个运行将交给仍在运行的工作进程。[y/N] "),
    "not_recovered": ("Not recovered.", "未接管。"),
    "record_fine": ("the run engine's record {path} is fine: nothing to start afresh",
                    "运行引擎的记录 {path} 完好，无需重新开始"),
    "afresh_ask": ("Make a new, empty run engine record at {path}? Unfinished runs become "
                   "interrupted (resume continues them from the steps the run store kept). "
                   "[y/N] ",
                   "在 {path} 新建一个空的运行引擎记录？未完成的运行会标记为“已中断”"
                   "（继续时从运行记录保存的步骤接着执行）。[y/N] "),
    "afresh_kept": ("the damaged run engine record is kept as {kept}",
                    "损坏的运行引擎记录已保存为 {kept}"),
    "afresh_done": ("a new run engine record is at {path}; {count} unfinished run(s) are "
                    "interrupted: resume continues them",
                    "已在 {path} 新建运行引擎记录；{count} 个未完成的运行已标记为“已中断”："
                    "继续即可接着执行"),
    "recovered": ("worker {name}: {count} unfinished run(s) handed to the live workers",
                  "工作进程 {name} 的 {count} 个未完成运行已交给仍在运行的工作进程"),
    "rehearsal": ("Rehearsal (nothing was run): {problems} problem(s), {effects} side "
                  "effect(s) not called, about {calls} LLM calls when it runs",
                  "排练（未执行任何步骤）：{problems} 个问题，{effects} 个副作用未调用，"
                  "实际执行约需 {calls} 次大模型调用"),
    "rehearsal_problem": ("  ✗ {text}", "  ✗ {text}"),
    "rehearsal_side_effect": ("  ⚠ {text}", "  ⚠ {text}"),
    "rehearsal_note": ("  · {text}", "  · {text}"),
    "rehearsal_needs_plan": ("Give a request to plan, or a plan file with --plan FILE.",
                             "请给出要规划的请求，或用 --plan FILE 指定计划文件。"),
    "rehearsal_not_refined": ("--rehearse rehearses a plan drafted for a request; refine the "
                              "plan file first, then rehearse it with run --plan FILE "
                              "--dry-run.",
                              "--rehearse 只排练为请求起草的计划；请先修改计划文件，再用 "
                              "run --plan FILE --dry-run 排练。"),
    "rehearsal_plan_only": ("--mode {mode} answers without a plan, so there is nothing to "
                            "rehearse; drop --mode or use --mode plan.",
                            "--mode {mode} 不经计划直接回答，没有可排练的计划；请去掉 --mode "
                            "或改用 --mode plan。"),
    "on_worker": ("on {name}", "于 {name}"),
    # plan variants (core.cli.variants)
    "variant": ("Variant {number} ({angles}): {steps} steps, critical path {path}, about "
                "{calls} LLM calls, side effects: {effects}",
                "方案 {number}（{angles}）：{steps} 个步骤，关键路径 {path}，约 {calls} 次大模型"
                "调用，副作用：{effects}"),
    "variant_problem": ("  ✗ {text}", "  ✗ {text}"),
    "variant_offline": ("the offline planner", "离线规划器"),
    "variants_not_with": ("--variants drafts new plans for a request; it does not combine "
                          "with {option}: drop one of them.",
                          "--variants 为请求起草新的计划，不能与 {option} 同用：请去掉其中一个。"),
    "variants_plan_only": ("--mode {mode} answers without a plan, so there are no variants to "
                           "compare; drop --mode or use --mode plan.",
                           "--mode {mode} 不经计划直接回答，没有可对比的方案；请去掉 --mode "
                           "或改用 --mode plan。"),
    # refine (core.cli.refine)
    "refining_run": ("Plan v{version} of run {run_id}, refined (approved, it runs as a new "
                     "run):",
                     "运行 {run_id} 的计划 v{version} 修改如下（批准后作为新的运行执行）："),
    "template_saved": ("Saved template {name} from run {run_id}.",
                       "已把运行 {run_id} 保存为模板 {name}。"),
    "template_parameter": ("  parameter {name} (it was {example})",
                           "  参数 {name}（原值 {example}）"),
    "template_no_parameters": ("  no parameters: the plan runs as it was saved",
                               "  没有参数：计划按保存时的样子运行"),
    "template_heading": ("template {name}, saved by {saved_by} at {created} from run {run_id}",
                         "模板 {name}，由 {saved_by} 于 {created} 从运行 {run_id} 保存"),
    "template_deleted": ("Deleted template {name}.", "已删除模板 {name}。"),
    "no_templates": ("No templates yet; save a run's plan with: python -m core templates save "
                     "RUN_ID --name NAME",
                     "还没有模板；保存一次运行的计划：python -m core templates save RUN_ID "
                     "--name NAME"),
    "template_fits": ("a saved plan fits: {name} ({score} alike); start from it without "
                      "planning: {command}",
                      "有一个已保存的计划适用：{name}（相似度 {score}）；不经规划直接使用它："
                      "{command}"),
    # rerun (core.cli.rerun)
    "rerun_again": ("Runs again: {steps}. Kept with their results (not run again): {kept}.",
                    "重新运行：{steps}。保留原结果（不再运行）：{kept}。"),
    "rerun_side_effect": ("{step_id} calls {tool}, which has a side effect: it runs again.",
                          "{step_id} 调用 {tool}，它会产生副作用：这一步会再次执行。"),
    "rerun_ask": ("Re-run from {step_id}? [y/N] ", "从 {step_id} 重新运行吗？[y/N] "),
    "not_rerun": ("Not re-run; nothing was recorded.", "未重新运行；没有记录任何内容。"),
    "args_not_json": ("{option} is not valid JSON ({error}); pass an object like "
                      "'{{\"name\": \"value\"}}'.",
                      "{option} 不是有效的 JSON（{error}）；请传入对象，例如 "
                      "'{{\"name\": \"value\"}}'。"),
    "args_not_object": ("{option} must be a JSON object like '{{\"name\": \"value\"}}'.",
                        "{option} 必须是 JSON 对象，例如 '{{\"name\": \"value\"}}'。"),
}


def cli_language() -> str:
    """"zh" when PLANBOARD_LANG (or, without it, the locale) asks for Chinese, else "en"."""
    chosen = os.environ.get("PLANBOARD_LANG", "").strip().lower()
    if chosen:
        return "zh" if chosen.startswith("zh") else "en"
    locale = os.environ.get("LC_ALL") or os.environ.get("LANG") or ""
    return "zh" if locale.lower().startswith("zh") else "en"


def say(key: str, **fmt: object) -> str:
    """The command line's text ``key`` in its language, formatted with ``fmt``."""
    english, chinese = _TEXT[key]
    text = chinese if cli_language() == "zh" else english
    return text.format(**fmt) if fmt else text
