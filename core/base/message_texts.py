"""The wordings of every message code, ``code: (English, 中文)``, read by core.base.messages.

One concept however long: the one catalogue of what core says, a table a translator reads
whole, with both wordings of every code side by side so that a face words any code in
either language and the tests check it entry by entry; its sections follow the wings that
raise the codes.

Placeholders are ``str.format`` fields; both wordings of an entry use the same ones (a test
holds them to it). The English wording is what errors and records have always said.
"""

from __future__ import annotations

__all__ = ["TEXTS"]

TEXTS: dict[str, tuple[str, str]] = {
    # ---- settings (ConfigError) --------------------------------------------------------
    "config.no_llm": (
        "No LLM is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for another provider) "
        "in the environment or a .env file, or pass --offline to use the offline planner.",
        "未配置大模型：请在环境变量或 .env 文件中设置 OPENAI_API_KEY（其他服务商再设置 "
        "OPENAI_BASE_URL），或使用 --offline 改用离线规划器。"),
    "config.no_key": (
        "No API key is set. Set OPENAI_API_KEY (in the environment, .env or the sidebar), or "
        "point OPENAI_BASE_URL at a local server that needs none.",
        "未设置 API 密钥。请设置 OPENAI_API_KEY（环境变量、.env 或侧边栏），或把 "
        "OPENAI_BASE_URL 指向不需要密钥的本地服务。"),
    "config.unknown_mode": ("Unknown mode {mode}; use one of: {modes}.",
                            "未知的处理方式 {mode}；可选：{modes}。"),
    "config.needs_detail": (
        "The request needs more detail before it can be planned ({questions}); add it to the "
        "request and submit it again.",
        "这个请求需要补充细节才能规划（{questions}）；请把它们写进请求后重新提交。"),
    "config.empty_request": ("The request is empty; say what you want done.",
                             "请求为空；请说明要做什么。"),
    "config.request_too_long": (
        "The request is {length:,} characters long; the limit is {limit:,}. Shorten it to "
        "what should be done and send it again.",
        "请求有 {length:,} 个字符，超过上限 {limit:,}。请只保留要做的事，缩短后重新提交。"),
    "config.not_seconds": (
        "{variable}={raw} is not a positive number of seconds. Set it to e.g. {variable}=60 "
        "or remove it.",
        "{variable}={raw} 不是正的秒数。请改为例如 {variable}=60，或删除这项设置。"),
    "config.not_count": (
        "{variable}={raw} is not a whole number >= 0. Set it to e.g. {variable}=2 or remove it.",
        "{variable}={raw} 不是大于等于 0 的整数。请改为例如 {variable}=2，或删除这项设置。"),
    "config.not_positive_count": (
        "{variable}={raw} is not a whole number >= 1. Set it to e.g. {variable}={example} or "
        "remove it.",
        "{variable}={raw} 不是大于等于 1 的整数。请改为例如 {variable}={example}，"
        "或删除这项设置。"),
    "config.not_switch": (
        "{variable}={raw} is neither on nor off. Set it to {variable}=on, {variable}=off or "
        "auto, or remove it.",
        "{variable}={raw} 既不是 on 也不是 off。请改为 {variable}=on、{variable}=off 或 auto，"
        "或删除这项设置。"),
    "config.unknown_provider": ("Unknown provider {name}. Set PLANBOARD_PROVIDER to one of: "
                                "{names}.",
                                "未知的模型服务商 {name}。请把 PLANBOARD_PROVIDER 设为以下之一："
                                "{names}。"),
    "config.home_unwritable": (
        "Cannot create the PlanBoard home {home} ({reason}); set PLANBOARD_HOME to a writable "
        "directory.",
        "无法创建 PlanBoard 数据目录 {home}（{reason}）；请把 PLANBOARD_HOME 设为可写的目录。"),
    "config.not_date": ("{variable}={raw} is not a date. Set it as YYYY-MM-DD, e.g. "
                        "{variable}=2026-12-01, or remove it.",
                        "{variable}={raw} 不是日期。请写成 YYYY-MM-DD，例如 "
                        "{variable}=2026-12-01，或删除这项设置。"),
    # ---- API tokens (NotIdentifiedError) ---------------------------------------------
    "api.no_token": (
        "Sign-in is on: send a person's API token as \"Authorization: Bearer <token>\".",
        "已启用登录：请以 \"Authorization: Bearer <令牌>\" 发送某人的 API 令牌。"),
    "api.bad_token": (
        "The API token is not one PlanBoard knows; ask an admin for yours "
        "({variable}).",
        "PlanBoard 不认识这个 API 令牌；请向管理员索取你的令牌（{variable}）。"),
    "api.bad_tokens_setting": (
        "{variable} is not a list of e-mail=token pairs (entry {entry}); write "
        "{variable}=\"ann@example.com=<token of 24 characters or more>\".",
        "{variable} 不是 e-mail=令牌 的列表（第 {entry} 项）；请写成 "
        "{variable}=\"ann@example.com=<至少 24 个字符的令牌>\"。"),
    # ---- plans sent for review by another agent (InputError) ----------------------
    "review.body_too_large": (
        "The request body is {size:,} bytes; the limit is {most:,}. Send a smaller plan.",
        "请求内容有 {size:,} 字节，超过上限 {most:,}。请发送更小的计划。"),
    "review.not_json": (
        "The body is not JSON ({detail}); send a JSON object.",
        "请求内容不是 JSON（{detail}）；请发送一个 JSON 对象。"),
    "review.not_object": (
        "The body is a JSON {kind}, not an object; send {{\"plan\": ...}}.",
        "请求内容是 JSON {kind}，不是对象；请发送 {{\"plan\": ...}}。"),
    "review.no_plan": (
        "The body has no plan; put it under \"plan\" (plan JSON, steps or Markdown text).",
        "请求里没有计划；请放在 \"plan\" 下（计划 JSON、步骤列表或 Markdown 文本）。"),
    "review.plan_kind": (
        "\"plan\" is a JSON {kind}; send an object with steps, a list of steps or Markdown "
        "text.",
        "\"plan\" 是 JSON {kind}；请发送含 steps 的对象、步骤列表或 Markdown 文本。"),
    "review.markdown_no_items": (
        "The Markdown plan has no numbered or bulleted items; write each step as one.",
        "Markdown 计划里没有编号或项目符号条目；请把每一步写成一个条目。"),
    "review.bad_field": (
        "{field}: {detail}",
        "{field}：{detail}"),
    "review.too_many_steps": (
        "The plan has {count:,} steps; a review takes at most {most:,} ({variable}). Send "
        "a shorter plan, or split the work.",
        "计划有 {count:,} 个步骤；一次送审最多 {most:,} 步（{variable}）。请发送更短的计划，"
        "或把工作拆开。"),
    "review.duplicate_step": (
        "Two steps are named {step}; give each step its own id.",
        "有两个步骤都叫 {step}；请给每个步骤不同的 id。"),
    "review.unknown_dependency": (
        "Step {step} depends on {dependency}, which is not a step of the plan.",
        "步骤 {step} 依赖 {dependency}，但计划里没有这个步骤。"),
    "review.bad_tool": (
        "Tool {tool} cannot be taken: {problem}.",
        "工具 {tool} 无法接受：{problem}。"),
    "review.no_callback": (
        "PlanBoard calls no agent back: leave callback_url out and wait for the decision with "
        "GET /api/v1/reviews/<id>?wait=S.",
        "PlanBoard 不会回调代理：请去掉 callback_url，"
        "用 GET /api/v1/reviews/<id>?wait=S 等待决定。"),
    "review.tool_of_agent": (
        "{tool} belongs to the agent that sent the plan: the agent calls it, not PlanBoard.",
        "{tool} 属于发送计划的代理：由代理调用，而不是 PlanBoard。"),
    "review.state.pending": ("pending", "待审"),
    "review.state.approved": ("approved", "已批准"),
    "review.state.rejected": ("rejected", "已拒绝"),
    "review.edit_changes_steps": (
        "The edited plan has problems: {first}{more}",
        "编辑后的计划有问题：{first}{more}"),
    "review.sent_by": (
        "Plan sent for review by the agent {agent}: {state}",
        "由代理 {agent} 送审的计划：{state}"),
    "review.unnamed_agent": ("(unnamed)", "（未命名）"),
    "review.cancelled_undecided": (
        "the run was cancelled in PlanBoard before a decision",
        "运行在 PlanBoard 中被取消，尚未作出决定"),
    "review.problems": (
        "The plan cannot be reviewed: {first}{more}",
        "这个计划无法送审：{first}{more}"),
    "review.more_problems": (" (and {count} more)", "（另有 {count} 个问题）"),
    "review.not_found": (
        "There is no review {review_id}; use the id POST /api/v1/reviews returned.",
        "没有送审记录 {review_id}；请使用 POST /api/v1/reviews 返回的 id。"),
    "review.decided": (
        "Review {review_id} is already {status}; nothing was changed.",
        "送审 {review_id} 已经是{status}状态；没有做任何更改。"),
    "review.not_approved": (
        "Run {run_id} is {status}, not approved: nothing of it may run yet.",
        "运行 {run_id} 的状态是 {status}，尚未批准：现在还不能执行。"),
    "review.too_many_events": (
        "Run {run_id} has {most:,} events, as many as a run takes; no more are recorded.",
        "运行 {run_id} 已有 {most:,} 个事件，达到上限，不再记录。"),
    "review.event_invalid": (
        "The event is not an AG-UI event ({detail}).",
        "这不是 AG-UI 事件（{detail}）。"),
    "review.event_not_taken": (
        "{kind} events are not taken; send RUN_STARTED, STEP_STARTED, STEP_FINISHED, "
        "TOOL_CALL_START/ARGS/END/RESULT, RUN_FINISHED or RUN_ERROR.",
        "不接受 {kind} 事件；请发送 RUN_STARTED、STEP_STARTED、STEP_FINISHED、"
        "TOOL_CALL_START/ARGS/END/RESULT、RUN_FINISHED 或 RUN_ERROR。"),
    "review.event_unknown_step": (
        "Run {run_id} has no step {step}; its steps are {steps}.",
        "运行 {run_id} 没有步骤 {step}；它的步骤是 {steps}。"),
    "review.event_no_step": (
        "The tool call names no step and {count} steps are running; put the step's id in "
        "metadata.stepName.",
        "工具调用没有指明步骤，而当前有 {count} 个步骤在运行；"
        "请在 metadata.stepName 中写明步骤 id。"),
    "review.event_unknown_call": (
        "No TOOL_CALL_START opened tool call {call}.",
        "没有 TOOL_CALL_START 开启过工具调用 {call}。"),
    "review.event_out_of_order": (
        "{kind} cannot come now: run {run_id} is {status}.",
        "现在不能发送 {kind}：运行 {run_id} 的状态是 {status}。"),
    "review.step_out_of_order": (
        "{kind} cannot come now: step {step} is {status}.",
        "现在不能发送 {kind}：步骤 {step} 的状态是 {status}。"),
    # ---- the model endpoint (LLMError) -------------------------------------------------
    "llm.timeout": ("{url} did not answer within {seconds}s. Check that the server is running, "
                    "or raise PLANBOARD_TIMEOUT.",
                    "{url} 在 {seconds} 秒内没有响应。请确认服务正在运行，"
                    "或调大 PLANBOARD_TIMEOUT。"),
    "llm.unreachable": ("Cannot reach {url}. Check OPENAI_BASE_URL and that the server is "
                        "running.",
                        "无法连接 {url}。请检查 OPENAI_BASE_URL，并确认服务正在运行。"),
    "llm.unusable_reply": ("{url} sent a reply PlanBoard cannot use ({detail}). Check that it "
                           "is an OpenAI-compatible endpoint.",
                           "{url} 的回复无法使用（{detail}）。请确认它是兼容 OpenAI 的接口。"),
    "llm.key_rejected": ("The endpoint rejected the API key (401). Check OPENAI_API_KEY or the "
                         "key in the sidebar.",
                         "接口拒绝了 API 密钥（401）。请检查 OPENAI_API_KEY 或侧边栏中的密钥。"),
    "llm.forbidden": ("The endpoint refused access (403): {detail}. Check that the key may use "
                      "model {model}.",
                      "接口拒绝访问（403）：{detail}。请确认该密钥可以使用模型 {model}。"),
    "llm.model_not_found": ("{url} does not serve model {model} ({status}). Set {variable} (or "
                            "OPENAI_MODEL) to a model it serves.",
                            "{url} 没有提供模型 {model}（{status}）。请把 {variable}（或 "
                            "OPENAI_MODEL）设为它提供的模型。"),
    "llm.no_chat_api": ("{url} has no chat completions API (404: {detail}). Check "
                        "OPENAI_BASE_URL (it usually ends in /v1).",
                        "{url} 没有对话补全接口（404：{detail}）。请检查 OPENAI_BASE_URL"
                        "（通常以 /v1 结尾）。"),
    "llm.bad_request": ("The endpoint rejected the request ({status}): {detail}. Check the "
                        "provider (PLANBOARD_PROVIDER) and model settings.",
                        "接口拒绝了请求（{status}）：{detail}。请检查服务商（PLANBOARD_PROVIDER）"
                        "和模型设置。"),
    "llm.rate_limited": ("The endpoint is rate limiting requests (429): {detail}. Wait and try "
                         "again, or lower the number of parallel steps.",
                         "接口正在限流（429）：{detail}。请稍后再试，或减少并行步骤数。"),
    "llm.error_status": ("The endpoint answered {status}: {detail}. Try again later or check "
                         "the server logs.",
                         "接口返回 {status}：{detail}。请稍后再试，或查看服务端日志。"),
    "llm.budget_spent": (
        "The run has made all {limit} model calls its plan may spend, so no further call was "
        "made. Raise {variable} (or the run's max_model_calls) or ask for less at once.",
        "本次运行已用完计划可用的全部 {limit} 次大模型调用，因此没有再调用大模型。"
        "请调高 {variable}（或本次运行的 max_model_calls），或一次少问一些。"),
    # ---- plans --------------------------------------------------------------------------
    "plan.problems": ("The plan has problems: {problems}. Fix them and try again.",
                      "计划有问题：{problems}。请修改后再试。"),
    "offline.no_planner": (
        "Without a model PlanBoard plans only for the demo tools, and {variable} does not load "
        "them: set a model (OPENAI_API_KEY, or OPENAI_BASE_URL for a local server) or add "
        "demo to {variable}.",
        "没有大模型时，PlanBoard 只能为演示工具制定计划，而 {variable} 没有加载它们：请配置大模型"
        "（OPENAI_API_KEY，本地服务则设置 OPENAI_BASE_URL），或把 demo 加入 {variable}。"),
    # ---- periods a request names (core.planning.periods) ---------------------------------
    "period.label": ("{name} ({bounds})", "{name}（{bounds}）"),
    "period.year": ("{year}", "{year}年"),
    "period.quarter": ("{year} Q{quarter}", "{year}年第{quarter}季度"),
    "period.month": ("{month} {year}", "{year}年{month}月"),
    "period.week": ("the week of {first}", "{first}起的一周"),
    "period.past_days": ("the past {count} days", "过去{count}天"),
    "period.past_weeks": ("the past {count} weeks", "过去{count}周"),
    "period.past_months": ("the past {count} months", "过去{count}个月"),
    "period.data_days": ("the last {count} days of the data", "数据中的最后{count}天"),
    "period.data_weeks": ("the last {count} weeks of the data", "数据中的最后{count}周"),
    "period.data_months": ("the last {count} months of the data", "数据中的最后{count}个月"),
    "period.relative_name": ("{phrase}, {name}", "{phrase}即{name}"),
    "period.moved": ("{period}, the latest {unit} the data holds: {asked} ({asked_bounds}) has "
                     "no data",
                     "{period}，数据中最近的{unit}：{asked}（{asked_bounds}）没有数据"),
    "plan.too_large": (
        "The plan has {count} steps, more than the {most} a run takes ({variable}); give it "
        "phases (--mode hierarchical), or split the work into several runs.",
        "计划有 {count} 个步骤，超过了一次运行可接受的 {most} 步（{variable}）；请把它分成阶段"
        "（--mode hierarchical），或拆成几次运行。"),
    "plan.phase_too_large": (
        "Phase {phase} has {count} steps, more than the {most} a run takes in one phase "
        "({variable}); split it into smaller phases.",
        "阶段 {phase} 有 {count} 个步骤，超过了单个阶段可接受的 {most} 步（{variable}）；"
        "请把它拆成更小的阶段。"),
    # ---- phases (core.plan.phases): the level above steps -------------------------------
    "phase.duplicate": ("{phase} appears more than once; give every phase its own id",
                        "{phase} 出现了不止一次；每个阶段需要自己的编号"),
    "phase.bad_id": ("{phase} is not a valid phase id; phase ids look like p1, p2, p3",
                     "{phase} 不是有效的阶段编号；阶段编号形如 p1、p2、p3"),
    "phase.no_title": ("{phase} has no title; say what the phase is for",
                       "{phase} 没有标题；请写明这个阶段做什么"),
    "phase.after_itself": ("{phase} comes after itself; remove it from its depends_on",
                           "{phase} 依赖了自己；请把它从 depends_on 中去掉"),
    "phase.after_unknown": ("{phase} comes after unknown phase {dep}",
                            "{phase} 依赖了不存在的阶段 {dep}"),
    "phase.cycle": ("phases {phases} form a cycle; remove one link",
                    "阶段 {phases} 形成了循环依赖；请去掉其中一条依赖"),
    "phase.none_in_plan": ("{step} names phase {phase}, but the plan has no phases; add the "
                           "phase or clear the step's phase",
                           "{step} 属于阶段 {phase}，但计划没有阶段；请添加这个阶段，"
                           "或清空这一步的阶段"),
    "phase.step_without": ("{step} names no phase; give it one of {phases}",
                           "{step} 没有所属阶段；请从 {phases} 中选一个"),
    "phase.step_unknown": ("{step} names unknown phase {phase}; phases are {phases}",
                           "{step} 属于不存在的阶段 {phase}；已有的阶段：{phases}"),
    "phase.step_order": (
        "{step} (phase {phase}) depends on {dep} of phase {dep_phase}, which {phase} does not "
        "come after; make {phase} depend on {dep_phase} or drop the dependency",
        "{step}（阶段 {phase}）依赖了阶段 {dep_phase} 的 {dep}，而 {phase} 并不在 {dep_phase} "
        "之后；请让 {phase} 依赖 {dep_phase}，或去掉这条依赖"),
    "phase.too_few": ("the phase plan has {count} phase(s); write at least {least} phases, "
                      "one per stage of the request",
                      "阶段计划只有 {count} 个阶段；请至少写 {least} 个阶段，请求的每个阶段一个"),
    "phase.fallback": ("The phase planner's output could not be used, so the whole request is "
                       "one phase, planned when the run reaches it",
                       "阶段规划器的输出无法使用，已把整个请求作为一个阶段，运行到它时再规划"),
    "phase.one_offline": ("No offline rule drafts this request in phases, so its plan is one "
                          "phase",
                          "离线规则无法把这个请求分成阶段，因此整个计划是一个阶段"),
    "phase.no_steps": ("Phase {phase} was not expanded into steps: {reason}",
                       "阶段 {phase} 没有展开成步骤：{reason}"),
    "phase.expansion_empty": ("the expansion gave the phase no step",
                              "展开没有为这个阶段给出任何步骤"),
    "phase.expanded": ("phase {phase} ({title}) expanded into {count} step(s)",
                       "阶段 {phase}（{title}）展开为 {count} 个步骤"),
    "phase.unreachable": ("phase {phase} cannot reach its goal: {reason}",
                          "阶段 {phase} 无法达成目标：{reason}"),
    "phase.done_missed": (
        "phase {phase} ({title}) finished its steps but did not meet its done-definition "
        "\"{done_when}\": {reason}",
        "阶段 {phase}（{title}）的步骤已完成，但没有达到完成标准“{done_when}”：{reason}"),
    "phase.not_completed": ("phase {phase} ({title}) is {status}: the work was not done",
                            "阶段 {phase}（{title}）{status}：这部分工作没有完成"),
    "phase.outside": (
        "the checkpoint after {after} was refused: it changes {steps} of another phase than "
        "{phases}",
        "{after} 之后的检查点被拒绝：它修改了 {phases} 以外阶段的步骤 {steps}"),
    # ---- checkpoints -------------------------------------------------------------------------
    "checkpoint.unchanged": ("no pending step's target is already under way",
                             "没有待执行步骤的目标已在处理中"),
    "checkpoint.under_way": (
        "{source} shows {target} already in progress ({detail}): {tool} is not needed "
        "again, so {steps} was dropped",
        "{source} 显示 {target} 已在处理中（{detail}）：无需再次调用 {tool}，已移除步骤 {steps}"),
    # ---- plan checks (core.planning.checks): what they found or changed ------------------
    "plan.shortlist": (
        "The planner was shown {shown} of the {total} tools, those that fit the request "
        "({tools}); it was given every other tool's name and could use any of them",
        "规划器只看到了 {total} 个工具中与请求相关的 {shown} 个（{tools}）；其余工具只给了名称，"
        "也可以使用"),
    "check.repeated_read": ("The reply repeated {step}'s call 1 more time; the repeats were "
                            "removed.",
                            "回复把 {step} 的调用又重复了 1 次，重复的已去掉。"),
    "check.repeated_reads": ("The reply repeated {step}'s call {count} more times; the "
                             "repeats were removed.",
                             "回复把 {step} 的调用又重复了 {count} 次，重复的已去掉。"),
    "check.repeated_effect_done": ("{twin} already did “{description}”; it is not done again",
                                   "{twin} 已经完成了“{description}”，没有再做一次"),
    "check.twin_effect": (
        "{step} made the same {tool} call as {twin} (the same arguments and condition), and "
        "the request asks for it once: {step} was folded into {twin}. Add it back if it is "
        "meant twice.",
        "{step} 与 {twin} 的 {tool} 调用完全相同（参数和条件都一样），而请求只要求做一次："
        "已把 {step} 并入 {twin}。如果确实要做两次，请再加回来。"),
    "check.twin_effect_phase": (
        "Phase {phase} (“{title}”) held only {step}, and was taken out with it.",
        "阶段 {phase}（“{title}”）只含 {step}，已随它一起去掉。"),
    "check.condition_adopted": (
        "{step} ({tool}) stated its condition only in words; the request's wording gave it "
        "the condition {condition}: check it before approving.",
        "{step}（{tool}）的条件只写在描述里；已按请求的原话补上 condition：{condition}，"
        "请在批准前核对。"),
    "check.action_adopted": (
        "The plan lacked the {tool} the request asks for; {step} (\"{description}\") was added "
        "from the request's wording: check it before approving.",
        "计划里没有请求要求的 {tool}；已按请求的原话加上 {step}（“{description}”），"
        "请在批准前核对。"),
    "check.loose_arguments": (
        "{step} gave {tool} arguments it does not take, or no value ({args}); they were left "
        "out.",
        "{step} 给 {tool} 的参数中有它不接受的或没有值的（{args}），已去掉。"),
    "check.code_to_reasoning": (
        "{step} gave {tool} code, not arithmetic ({args}); it is worked out by reasoning "
        "instead.",
        "{step} 给 {tool} 的不是算式（{args}），改为由模型推理完成。"),
    "check.text_field_read_whole": (
        "{step} read {reference}, a field of a text; it reads the whole text, {whole}.",
        "{step} 读取的 {reference} 是文本的字段；改为读取全文 {whole}。"),
    "check.reasoning_needs_tool": (
        "{step} is a reasoning step but names {what}: look it up with a tool ({tools}) "
        "instead of \"tool\": null.",
        "{step} 是没有工具的推理步骤，但它提到了{what}：请改用工具（{tools}）来查。"),
    "check.tool_misfit": (
        "{step} calls {tool}, but its description (\"{description}\") is what {better} is "
        "for: call {better}, or reword the step.",
        "{step} 调用 {tool}，但它的描述（“{description}”）是 {better} 的用途：请改用 {better}，"
        "或改写描述。"),
    "check.uncovered": (
        "No step covers this part of the request: \"{clause}\". Add a step for it (with a "
        "tool when one fits).",
        "没有步骤覆盖请求中的这部分：“{clause}”。请为它加上步骤（有合适的工具就用工具）。"),
    "check.missing_action": (
        "The request asks for {tool} (\"{description}\"), but no step calls it: add that "
        "step, e.g. {example}, with any condition in \"condition\".",
        "请求要求执行 {tool}（“{description}”），但没有步骤调用它：请加上这一步，例如 "
        "{example}，条件写进 condition。"),
    "check.repeated_calls": (
        "{steps} repeat {step} (the same tool and arguments): remove them, or make them do "
        "a part of the request no step does yet.",
        "{steps} 重复了 {step}（同样的工具和参数）：删掉它们，或改成请求中还没有步骤去做的事。"),
    "check.repeats_failed_call": (
        "{step} calls {tool} with the same arguments as {failed}, which failed: {error}. "
        "Change the arguments as the error says, take another route, or leave the step out "
        "when the completed steps already answer the request.",
        "{step} 用与 {failed} 相同的参数调用 {tool}，而 {failed} 失败了：{error}。请按错误提示"
        "修改参数、换一种做法；如果已完成的步骤已经能回答请求，就去掉这一步。"),
    "check.period_ignored": (
        "The request is about {start} up to {end} (exclusive), but {step}'s query has no date "
        "condition: add one, e.g. WHERE <date column> >= '{start}' AND <date column> < "
        "'{end}'.",
        "请求问的是 {start} 到 {end}（不含）这段时间，但 {step} 的查询没有按日期筛选："
        "请加上日期条件，例如 WHERE <日期列> >= '{start}' AND <日期列> < '{end}'。"),
    "check.invented_id": (
        "{step} passes {name}={value}, which is neither in the request nor in an earlier "
        "result (copied from an example?): reference the step that looks it up, e.g. "
        "{{{{sN.{name}}}}}, or add a step that does.",
        "{step} 的参数 {name}={value} 既不在请求中，也不在已有结果中（像是照抄了示例）："
        "请从查到它的步骤引用，例如 {{{{sN.{name}}}}}，或先加一个查它的步骤。"),
    "check.invented_id_removed": (
        "{step}'s {name}={value} came from nowhere and was cleared: it will be filled from "
        "earlier results when the step runs.",
        "{step} 的参数 {name}={value} 来历不明，已清空：运行时将根据前面步骤的结果填写。"),
    "check.id_source_added": (
        "{step} needs {name}, which no step before it returns; {source} was added to find it "
        "with {tool}, and {step} reads it from there.",
        "{step} 需要 {name}，但前面没有步骤返回它；已加上 {source} 用 {tool} 查出它，"
        "{step} 从那里读取。"),
    "check.id_source_linked": (
        "{step} reads {name} from {source} ({tool}), whose result holds it.",
        "{step} 从 {source}（{tool}）的结果读取 {name}。"),
    "check.id_source_step": (
        "Find what {step} needs with {tool}",
        "用 {tool} 查出 {step} 需要的信息"),
    "check.condition_in_words": (
        "{step} ({tool}) states a condition in its description but has no \"condition\", so "
        "it would run regardless: write the condition over earlier results, e.g. "
        "{source}.<field> == '<value>'.",
        "{step}（{tool}）的描述带条件，但没有填写 condition，它会无条件执行：请把条件写进 "
        "condition，用前面步骤的结果表达，例如 {source}.<字段> == '<取值>'。"),
    "check.drop_clause": ("the steps for \"{clause}\" cannot all be dropped: that part of the "
                          "request is not done yet",
                          "不能去掉“{clause}”的所有步骤：请求的这一部分还没有完成"),
    "check.drop_approved": ("{step} cannot be dropped: it is an approved action and no "
                            "condition says it is not needed",
                            "不能去掉 {step}：它是已批准的操作，没有条件表明它不再需要"),
    "check.drop_unchecked": ("{step} cannot be dropped: its condition {condition} cannot be "
                             "checked over the results so far",
                             "不能去掉 {step}：它的条件 {condition} 无法用已有结果判断"),
    "check.drop_waiting": ("{step} cannot be dropped: its condition {condition} reads a "
                           "result still to come",
                           "不能去掉 {step}：它的条件 {condition} 要读的结果还没有出来"),
    "check.drop_due": ("{step} cannot be dropped: its condition {condition} holds",
                       "不能去掉 {step}：它的条件 {condition} 已经成立"),
    "check.drop_asked_tool": ("{step} cannot be dropped: the request asks for what {tool} "
                              "gives, and no other step calls it",
                              "不能去掉 {step}：请求要的正是 {tool} 的结果，没有别的步骤调用它"),
    # ---- tools (ToolError) ---------------------------------------------------------------
    "toolset.unknown": (
        "Toolset {name} could not be loaded: it is not builtin, an installed planboard "
        "toolset or an importable module ({error}). Fix {variable} or install it.",
        "无法加载工具集 {name}：它不是 builtin、已安装的 planboard 工具集，也不是可导入的模块"
        "（{error}）。请修改 {variable}，或先安装它。"),
    "toolset.failed": ("Toolset {name} failed while loading ({error}); its tools are not "
                       "available. Fix the module, or remove it from PLANBOARD_TOOLSETS.",
                       "工具集 {name} 加载失败（{error}），它的工具不可用。请修复该模块，"
                       "或把它从 PLANBOARD_TOOLSETS 中移除。"),
    "toolset.empty": ("Toolset {name} defines no @tool function and no register(registry); "
                      "mark its tools with @tool from core.tools.registry.",
                      "工具集 {name} 没有 @tool 函数，也没有 register(registry)；请用 "
                      "core.tools.registry 的 @tool 标记它的工具。"),
    # ---- MCP servers (ToolsetError while loading, ToolExecutionError while calling) ------
    "mcp.config_unreadable": (
        "Cannot read the MCP configuration {path} ({error}); fix the path in {variable}, or "
        "remove the variable to use mcp.json in PLANBOARD_HOME.",
        "无法读取 MCP 配置文件 {path}（{error}）；请修正 {variable} 中的路径，或删除这个变量以使用 "
        "PLANBOARD_HOME 下的 mcp.json。"),
    "mcp.config_invalid": (
        "The MCP configuration {path} cannot be used: {problem}. Write it as {example}.",
        "MCP 配置文件 {path} 无法使用：{problem}。请按这个格式书写：{example}。"),
    "mcp.config_not_json": ("it is not valid JSON ({error})", "它不是有效的 JSON（{error}）"),
    "mcp.server_invalid": (
        "MCP server {server} in {path} is left out: {problem}.",
        "MCP 配置文件 {path} 中的服务器 {server} 未加载：{problem}。"),
    "mcp.start_failed": (
        "MCP server {server} could not start: {reason}. Check its entry in {path}, or run its "
        "command by hand to see why.",
        "MCP 服务器 {server} 无法启动：{reason}。请检查 {path} 中它的配置，"
        "或手动运行它的命令查看原因。"),
    "mcp.start_timeout": (
        "MCP server {server} did not answer within {seconds} s of starting; check that its "
        "command starts an MCP server (stdio), or raise its \"startTimeout\" in {path}.",
        "MCP 服务器 {server} 启动后 {seconds} 秒内没有响应；请确认它的命令启动的是 "
        "MCP 服务器（stdio），或调大 {path} 中它的 \"startTimeout\"。"),
    "mcp.server_exited": ("MCP server {server} stopped (its stderr ends: {stderr})",
                          "MCP 服务器 {server} 已停止（它的 stderr 最后输出：{stderr}）"),
    "mcp.tool_name_refused": (
        "MCP server {server}: tool {tool} is left out: its name would be longer than the 64 "
        "characters model providers accept; give the server a shorter name.",
        "MCP 服务器 {server}：工具 {tool} 未加载：它的名字会超过模型服务商接受的 64 个字符；"
        "请给这个服务器起一个更短的名字。"),
    "mcp.tool_name_clash": (
        "MCP server {server}: tool {tool} is left out: another of its tools is also named "
        "{name} once its name is made valid for model providers.",
        "MCP 服务器 {server}：工具 {tool} 未加载：把名字改成模型服务商接受的形式后，"
        "它和另一个工具都叫 {name}。"),
    "mcp.tool_schema_refused": (
        "MCP server {server}: tool {tool} is left out: {problem}.",
        "MCP 服务器 {server}：工具 {tool} 未加载：{problem}。"),
    "mcp.unknown_listed_tool": (
        "MCP server {server}: \"{key}\" names {tools}, which the server does not offer; fix "
        "the names in {path} ({variable}).",
        "MCP 服务器 {server}：\"{key}\" 中的 {tools} 不是这个服务器提供的工具；请修改 {path}"
        "（{variable}）中的名字。"),
    "mcp.call_timeout": (
        "{tool}: MCP server {server} did not answer within {seconds} s; the call was abandoned "
        "(raise its \"timeout\" in {path} if it needs longer).",
        "{tool}：MCP 服务器 {server} 在 {seconds} 秒内没有响应，已放弃这次调用（如需更长时间，"
        "请调大 {path} 中它的 \"timeout\"）。"),
    "mcp.tool_error": ("{tool} failed on MCP server {server}: {error}",
                       "{tool} 在 MCP 服务器 {server} 上执行失败：{error}"),
    "mcp.call_refused": ("{tool}: MCP server {server} refused the call: {error}",
                         "{tool}：MCP 服务器 {server} 拒绝了这次调用：{error}"),
    "mcp.server_died": (
        "{tool}: MCP server {server} stopped during the call ({reason}); it is started again "
        "for the next call.",
        "{tool}：MCP 服务器 {server} 在调用过程中停止了（{reason}）；下次调用时会重新启动它。"),
    "mcp.server_unavailable": ("{tool}: MCP server {server} is not available: {reason}",
                               "{tool}：MCP 服务器 {server} 不可用：{reason}"),
    "tool.unknown": ("unknown tool {name}; registered tools are: {known}",
                     "未知工具 {name}；已注册的工具有：{known}"),
    "tool.args_not_object": ("{tool}: arguments must be a JSON object, got {kind}",
                             "{tool}：参数必须是 JSON 对象，而不是 {kind}"),
    "tool.args_invalid": ("{tool}: {problems} (check the tool's parameter schema)",
                          "{tool}：{problems}（请对照工具的参数定义）"),
    "tool.arg_missing": ("{field}: Field required", "{field}：缺少这个必填参数"),
    "tool.arg_extra": ("{field}: Extra inputs are not permitted", "{field}：不接受这个参数"),
    "tool.arg_invalid": ("{field}: {detail}", "{field}：取值不合法（{detail}）"),
    "tool.crashed": ("{tool} failed: {error}", "{tool} 执行出错：{error}"),
    "tool.reported": ("{text}", "{text}"),
    "tool.none_answers_questions": (
        "no tool answers questions from documents (none declares answers_questions in its "
        "hints); plan the request instead",
        "没有能检索文档回答问题的工具（没有工具在提示中声明 answers_questions）；请改为规划"),
    "tool.invented_id": (
        "{tool} was not called: {name}={value} is in neither the request nor an earlier "
        "result (a tool description's example is no real record); look it up with a step or "
        "tool that finds it, or ask the person for it",
        "没有调用 {tool}：{name}={value} 既不在请求中，也不在之前的结果中（工具说明里的示例不是"
        "真实记录）；请先用能查到它的步骤或工具查出来，或向用户询问"),
    "tool.calculate_failed": ("calculate: {error}", "calculate 无法计算：{error}"),
    "tool.unknown_time_zone": ("get_current_time: unknown time zone {zone}; use an IANA name "
                               "such as 'Asia/Shanghai'",
                               "get_current_time：未知时区 {zone}；请使用 IANA 时区名，"
                               "例如 'Asia/Shanghai'"),
    "search.empty_query": ("web_search needs a non-empty query", "web_search 需要非空的查询词"),
    "search.http_error": ("web_search: SearXNG answered HTTP {status}; check that its JSON "
                          "format is enabled (search.formats: [html, json]) at {url}",
                          "web_search：SearXNG 返回 HTTP {status}；请确认 {url} 已启用 JSON "
                          "格式（search.formats: [html, json]）"),
    "search.unreachable": ("web_search: cannot reach SearXNG at {url} ({error}); check "
                           "{variable}",
                           "web_search：无法连接 {url} 上的 SearXNG（{error}）；请检查 {variable}"),
    "search.not_json": ("web_search: SearXNG at {url} did not return JSON; enable the json "
                        "format",
                        "web_search：{url} 上的 SearXNG 没有返回 JSON；请启用 json 格式"),
    # ---- references between steps ({{sN.field}}) ------------------------------------------
    "ref.in_argument": ("argument {name}: {error}", "参数 {name}：{error}"),
    "ref.no_result": ("{reference} cannot be resolved: {step} has no result (it did not "
                      "complete); make the step depend on {step} or give the value directly",
                      "无法解析 {reference}：{step} 没有结果（它没有完成）；请让本步骤依赖 {step}，"
                      "或直接填写取值"),
    "ref.no_field": ("{reference} cannot be resolved: {walked} has no field {field}{known}; fix "
                     "the reference in the plan",
                     "无法解析 {reference}：{walked} 没有字段 {field}{known}；请修改计划中的引用"),
    "ref.known_fields": (" (its fields are: {fields})", "（它的字段有：{fields}）"),
    "ref.not_an_object": (" (its result is a {kind}, not an object)",
                          "（它的结果是 {kind}，不是对象）"),
    "ref.no_item": ("{reference} cannot be resolved: {walked} has no item [{position}]; fix "
                    "the reference in the plan",
                    "无法解析 {reference}：{walked} 没有第 [{position}] 项；请修改计划中的引用"),
    # ---- running a step ---------------------------------------------------------------------
    "step.in_doubt": (
        "{step} was calling {tool} when its run stopped; the call may already have happened, "
        "so it is not made again unless a person says so",
        "{step} 在运行中断时正在调用 {tool}；这次调用可能已经生效，"
        "因此除非有人确认，否则不会再次调用"),
    "step.in_doubt_not_repeated": (
        "not run again: the call of {tool} may already have happened before the run stopped, "
        "and a person chose not to repeat it",
        "未再次运行：运行中断前对 {tool} 的调用可能已经生效，有人选择不再重复"),
    "step.llm_failed": ("the model endpoint failed: {error}", "大模型接口调用失败：{error}"),
    "step.prefixed": ("{step}: {error}", "{step}：{error}"),
    "step.bad_arguments": ("{step} {error}", "{step} 的{error}"),
    "step.uses_unknown_tool": ("{step} uses {error}", "{step} 使用了{error}"),
    "step.condition_unchecked": ("{step} condition cannot be checked: {error}",
                                 "{step} 的条件无法判断：{error}"),
    "step.condition_not_met": ("condition not met: {condition}", "条件不满足：{condition}"),
    "step.condition_prose_offline": (
        "the condition {condition} is written in prose and no LLM is configured to judge it, "
        "so the step was skipped to be safe; write it as an expression such as "
        "s2.status == 'delivered'",
        "条件 {condition} 是用文字写的，而没有配置大模型来判断，为稳妥起见跳过了此步骤；请写成"
        "表达式，例如 s2.status == 'delivered'"),
    "step.condition_unclear": ("the condition judge replied {reply}; the step was skipped to "
                               "be safe",
                               "条件判断的回复是 {reply}，为稳妥起见跳过了此步骤"),
    # the English of these four is what the run view reads back (core/runs/view.skip_reason)
    "step.rejected": ("rejected by a person", "已被人拒绝"),
    "step.cancelled": ("cancelled by a person", "已被人取消"),
    "step.blocked": ("skipped: depends on failed step {steps}", "所依赖的步骤 {steps} 失败"),
    "step.never_ready": ("skipped: its dependencies never finished",
                         "所依赖的步骤始终没有完成"),
    "step.cancelled_before_start": ("cancelled before it started", "开始前已取消"),
    "step.reasoning_needs_llm": (
        "{step} is a reasoning step and needs an LLM; configure a model (OPENAI_API_KEY) or "
        "give the step a tool with arguments",
        "{step} 是推理步骤，需要大模型；请配置模型（OPENAI_API_KEY），或为它指定工具和参数"),
    "step.args_need_llm": (
        "{step} needs arguments for {tool} (missing: {missing}) and no LLM is configured to "
        "fill them in; write them into the step's args",
        "{step} 调用 {tool} 缺少参数（{missing}），而没有配置大模型来补全；请在步骤参数中填写"),
    "step.all_args": ("all", "全部"),
    "step.tool_not_called": (
        "{step}: the model did not call {tool} (tool_choice {mode} was not honoured), so the "
        "tool did not run; fill in the arguments in the plan or use a model that supports tool "
        "calls",
        "{step}：模型没有调用 {tool}（未遵守 tool_choice {mode}），工具没有执行；请在计划中填写"
        "参数，或换用支持工具调用的模型"),
    "step.args_not_json": ("{step}: the model sent arguments for {tool} that are not JSON: "
                           "{arguments}",
                           "{step}：模型给 {tool} 的参数不是 JSON：{arguments}"),
    "step.args_not_object": ("{step}: the model sent {tool} arguments that are not a JSON "
                             "object",
                             "{step}：模型给 {tool} 的参数不是 JSON 对象"),
    "step.args_rejected": ("{step}: the model's arguments were rejected: {error}",
                           "{step}：模型给出的参数不合格：{error}"),
    "step.empty_synthesis": ("the model returned an empty answer for the synthesis step",
                             "模型为综合步骤返回了空答案"),
    "step.empty_answer": ("the model gave an empty answer for this step; try again",
                          "模型为此步骤给出了空答案；请重试"),
    "step.too_many_rounds": ("the step did not finish within {rounds} rounds; simplify the "
                             "step",
                             "此步骤在 {rounds} 轮内没有完成；请简化这个步骤"),
    # ---- answers without a plan (core.runs.answers) -----------------------------------------
    "answer.no_side_effects": ("{tool} has side effects, and an answer without a plan never "
                               "runs one; use plan mode to run it with a person's approval",
                               "{tool} 有副作用，不经计划的回答从不执行这类操作；请使用规划模式，"
                               "经人确认后再执行"),
    # ---- statuses (core.lifecycle): a run's and a step's, as the records write them ----
    "run_status.planned": ("planned", "已计划"),
    "run_status.running": ("running", "运行中"),
    "run_status.waiting_confirmation": ("waiting_confirmation", "等待确认"),
    "run_status.paused": ("paused", "已暂停"),
    "run_status.completed": ("completed", "已完成"),
    "run_status.failed": ("failed", "失败"),
    "run_status.cancelled": ("cancelled", "已取消"),
    "run_status.interrupted": ("interrupted", "已中断"),
    "step_status.pending": ("pending", "待执行"),
    "step_status.running": ("running", "执行中"),
    "step_status.completed": ("completed", "已完成"),
    "step_status.failed": ("failed", "失败"),
    "step_status.skipped": ("skipped", "已跳过"),
    # ---- a run's report (core.runs.export) ------------------------------------------------
    "skip.condition": ("its condition was not met ({detail})", "条件不满足（{detail}）"),
    "skip.rejected": ("a person rejected it", "被人工拒绝"),
    "skip.cancelled": ("the run was cancelled", "运行已取消"),
    "skip.blocked": ("it depends on failed step {detail}", "所依赖的步骤 {detail} 失败"),
    "skip.other": ("{detail}", "{detail}"),
    "version.initial_plan": ("initial plan", "初始计划"),
    "version.manual_edit": ("manual edit", "手动编辑"),
    "version.edited": ("edited by a person before approval", "审批前经人工编辑"),
    "version.rerun": ("re-run from {step}", "从 {step} 重新运行"),
    "version.reasoning": ("reasoning", "推理"),
    "version.step_failed": ("{step} ({tool}: {description}) failed: {error}",
                            "{step}（{tool}：{description}）失败：{error}"),
    "version.step_missed": (
        "{step} ({tool}: {description}) completed but missed its success criteria "
        "\"{criteria}\": {reason}",
        "{step}（{tool}：{description}）已完成，但没有达到成功标准“{criteria}”：{reason}"),
    "version.failures": ("{failures}", "{failures}"),
    "setting.offline": ("offline", "离线"),
    "setting.base_url": ("base_url", "服务地址"),
    "setting.planner_model": ("planner_model", "规划模型"),
    "setting.executor_model": ("executor_model", "执行模型"),
    "setting.timeout_s": ("timeout_s", "超时秒数"),
    "setting.max_retries": ("max_retries", "重试次数"),
    "setting.provider": ("provider", "服务商"),
    "setting.profile": ("profile", "服务商配置"),
    "word.yes": ("True", "是"),
    "word.no": ("False", "否"),
    # ---- runs and the store (StoreError) -------------------------------------------------
    "run.not_found": ("no run {run_id}; list the runs with: python -m core runs",
                      "没有运行 {run_id}；查看所有运行：python -m core runs"),
    "run.exists": ("run {run_id} exists already: this version of the plan was approved "
                   "before; see it with: python -m core show {run_id}",
                   "运行 {run_id} 已经存在：此版本的计划之前已批准过；查看它：python -m core show "
                   "{run_id}"),
    "run.nothing_to_resume": ("run {run_id} is already {status}; nothing to resume",
                              "运行 {run_id} 的状态已是“{status}”，无需继续"),
    "run.nothing_to_cancel": ("run {run_id} is already {status}; nothing to cancel",
                              "运行 {run_id} 的状态已是“{status}”，无需取消"),
    "run.no_plan": ("run {run_id} has no plan to continue; start a new run",
                    "运行 {run_id} 没有可继续的计划；请开始新的运行"),
    "run.followup_unfinished": ("run {run_id} is {status}; a follow-up needs a finished run "
                                "(wait for it, or start a new request)",
                                "运行 {run_id} 的状态是“{status}”；追加请求需要已结束的运行"
                                "（请等待它结束，或发起新的请求）"),
    "run.not_steerable": ("cannot {verb} run {run_id}: it is {status} and no process runs "
                          "it{hint}",
                          "无法{verb}运行 {run_id}：它的状态是“{status}”，且没有进程在运行它"
                          "{hint}"),
    "control.pause": ("pause", "暂停"),
    "control.confirm": ("confirm", "确认"),
    "control.reject": ("reject", "拒绝"),
    "control.approve_version": ("approve_version", "批准新版本"),
    "control.reject_version": ("reject_version", "拒绝新版本"),
    "run.busy": ("run {run_id} is already being run by {holder}; follow it with: python -m "
                 "core show {run_id}, or steer it with pause or cancel",
                 "运行 {run_id} 已由 {holder} 在运行；查看进度：python -m core show {run_id}，"
                 "或用暂停、取消来控制它"),
    "run.holder_unknown": ("another process", "另一个进程"),
    "run.holder_queue": ("the run queue (no worker has taken it yet)",
                         "运行队列（尚无工作进程接手）"),
    "run.resume_first": ("; resume it first", "；请先继续运行"),
    "run.worker_not_steerable": ("cannot {verb} run {run_id}: it is {status}",
                                 "无法{verb}运行 {run_id}：它的状态是“{status}”"),
    "run.resume_not_taken": (
        "run {run_id} was asked to resume, but the process holding it did not take the "
        "request within {seconds} s (busy, or no worker serves the run); it continues once "
        "it does (a queued run needs: python -m core worker)",
        "已请求继续运行 {run_id}，但持有它的进程在 {seconds} 秒内没有接收该请求"
        "（进程繁忙，或没有工作进程在执行它）；进程接收后它就会继续"
        "（排队中的运行需要：python -m core worker）"),
    "run.bad_execution_mode": ("PLANBOARD_EXECUTION is {value}: use embedded (runs execute "
                               "in this process, the default) or workers (runs go to "
                               "python -m core worker)",
                               "PLANBOARD_EXECUTION 的值 {value} 无效：请用 embedded（在本进程"
                               "内执行，默认）或 workers（交给 python -m core worker 执行）"),
    "run.worker_cannot_start": ("worker {name} cannot start: {error}; check PLANBOARD_DB_URL "
                                "(or PLANBOARD_HOME) and that its database is running",
                                "工作进程 {name} 无法启动：{error}；请检查 PLANBOARD_DB_URL（或 "
                                "PLANBOARD_HOME）以及数据库是否在运行"),
    "run.unsupported_database": (
        "PLANBOARD_DB_URL names a {backend} database; runs on workers need PostgreSQL "
        "(postgresql://user:password@host:5432/database) or SQLite (sqlite:///path, or no "
        "PLANBOARD_DB_URL)",
        "PLANBOARD_DB_URL 指向 {backend} 数据库；由工作进程执行运行需要 PostgreSQL"
        "（postgresql://user:password@host:5432/database）或 SQLite（sqlite:///路径，或不设置 "
        "PLANBOARD_DB_URL）"),
    "run.worker_name_taken": (
        "worker {name} is already running on this database (another python -m core worker "
        "under that name); stop it first, or give this worker another --name",
        "工作进程 {name} 已在这个数据库上运行（另一个同名的 python -m core worker）；"
        "请先停止它，或用 --name 给这个工作进程换一个名字"),
    "run.queue_unavailable": ("the run queue cannot be used ({error}); start a worker on the "
                              "same PLANBOARD_HOME or PLANBOARD_DB_URL first: "
                              "python -m core worker",
                              "无法使用运行队列（{error}）；请先在同一个 PLANBOARD_HOME 或 "
                              "PLANBOARD_DB_URL 上启动工作进程：python -m core worker"),
    "run.engine_unavailable": ("the run engine's database cannot be used ({error}); check "
                               "that PLANBOARD_HOME (or PLANBOARD_DB_URL) is writable and "
                               "its database reachable, then try again",
                               "无法使用运行引擎的数据库（{error}）；请检查 PLANBOARD_HOME（或 "
                               "PLANBOARD_DB_URL）可写、其数据库可访问，然后重试"),
    "run.record_lost": (
        "the run engine's record {path} is {problem}: no run can be started, resumed or "
        "steered until it is back. Restore it from a backup, or start afresh with: python -m "
        "core recover --afresh (unfinished runs become interrupted, and resume continues them "
        "from the steps the run store kept; finished runs keep their results)",
        "运行引擎的记录 {path} {problem}：在它恢复之前，无法开始、继续或控制任何运行。"
        "请从备份恢复它，或重新开始：python -m core recover --afresh"
        "（未完成的运行会标记为“已中断”，继续时从运行记录保存的步骤接着执行；"
        "已完成的运行保留其结果）"),
    "run.record_missing": ("missing", "已丢失"),
    "run.record_damaged": ("damaged ({error})", "已损坏（{error}）"),
    "run.record_lost_while_running": (
        "the run engine's record {path} was lost while this run went on: its steps are in "
        "the run store, but from then on a crash could not be recovered; start afresh with: "
        "python -m core recover --afresh",
        "本次运行期间，运行引擎的记录 {path} 丢失了：运行的步骤仍在运行记录中，"
        "但此后若发生崩溃将无法恢复；请重新开始：python -m core recover --afresh"),
    "run.runner_closed": ("this runner is closed; open a new one to start or resume runs",
                          "运行器已关闭；请打开新的运行器来开始或继续运行"),
    "lesson.not_found": ("no lesson {lesson_id}; list them with: python -m core lessons",
                         "没有经验 {lesson_id}；查看所有经验：python -m core lessons"),
    "lesson.duplicate": ("another lesson already says this; edit or delete that one instead",
                         "已有一条相同的经验；请修改或删除那一条"),
    "lesson.store_unavailable": ("the lessons store cannot be opened: {error}",
                                 "无法打开经验库：{error}"),
    # ---- who may do what (core.access: AccessDeniedError, the roles file) ----------------
    "access.no_role": (
        "{person} has no role in PlanBoard; ask an admin to give you one (the roles file, or "
        "python -m core roles grant)",
        "{person} 在 PlanBoard 中没有角色；请管理员为你分配一个（角色文件，或 python -m core "
        "roles grant）"),
    "access.denied": (
        "{person} (role: {role}) may not {action}: that needs the {needed} role; ask an "
        "admin",
        "{person}（角色：{role}）不能{action}：这需要{needed}角色；请联系管理员"),
    "access.not_visible": ("{person} may not see run {run_id}: it belongs to someone else",
                           "{person} 无权查看运行 {run_id}：它属于其他人"),
    "access.not_owner": (
        "{person} may not change run {run_id}: only its owner ({owner}) and approvers may",
        "{person} 不能操作运行 {run_id}：只有它的所有者（{owner}）和审批人可以"),
    "access_action.read": ("read runs", "查看运行"),
    "access_action.plan": ("plan or edit plans", "规划或编辑计划"),
    "access_action.run_read_only": ("start a run", "启动运行"),
    "access_action.approve": ("approve side effects", "批准有副作用的操作"),
    "access_action.steer": ("pause, resume, cancel, follow up or re-run a run",
                            "暂停、继续、取消、追加或重跑运行"),
    "access_action.admin": ("manage roles, tools or the demo data", "管理角色、工具或演示数据"),
    "role.viewer": ("viewer", "查看者"),
    "role.editor": ("editor", "编辑者"),
    "role.approver": ("approver", "审批人"),
    "role.admin": ("admin", "管理员"),
    "audit_action.approve": ("approved", "批准"),
    "audit_action.edit": ("edited the plan", "编辑计划"),
    "audit_action.confirm": ("confirmed", "确认"),
    "audit_action.reject": ("rejected", "拒绝"),
    "audit_action.approve_version": ("approved the new version", "批准新版本"),
    "audit_action.reject_version": ("rejected the new version", "拒绝新版本"),
    "audit_action.reject_plan": ("rejected the agent's plan", "拒绝代理的计划"),
    "audit_action.pause": ("paused", "暂停"),
    "audit_action.resume": ("resumed", "继续"),
    "audit_action.cancel": ("cancelled", "取消"),
    "audit_action.follow_up": ("followed up", "追加请求"),
    "audit_action.rerun": ("re-ran", "重跑"),
    "audit_action.grant_role": ("gave a role", "分配角色"),
    "audit_action.revoke_role": ("took a role back", "收回角色"),
    "audit_action.reset_demo": ("reset the demo data", "重置演示数据"),
    "via.sign-in": ("signed in", "已登录"),
    "via.os": ("OS user", "系统用户"),
    "via.token": ("API token", "API 令牌"),
    "audit.entry": ("{at} · {person} ({via}) {action}{what}",
                    "{at} · {person}（{via}）{action}{what}"),
    "audit.version": (" version {version}", " 版本 {version}"),
    "audit.step": (" step {step}", " 步骤 {step}"),
    "audit.heading": ("Who did what", "操作记录"),
    "audit.owner": ("Started by {person} ({via})", "发起人：{person}（{via}）"),
    "roles.bad_file": ("the roles file {path} cannot be read: {reason}; fix it or remove it",
                       "无法读取角色文件 {path}：{reason}；请修正或删除它"),
    "roles.unknown_role": ("{role} is not a role; use one of: {roles}",
                           "{role} 不是角色；可选：{roles}"),
    "roles.no_subject": ("name the person: an e-mail, or an OS user name",
                         "请指明人员：电子邮箱或操作系统用户名"),
    # ---- plan templates (core.plan.template, core.learning.templates) --------------------
    "template.bad_name": (
        "{name} is not a template name: use 1-64 letters, digits, - or _, starting with a "
        "letter or digit (for example refund-if-delivered)",
        "{name} 不是有效的模板名：请用 1 到 64 个字母、数字、- 或 _，以字母或数字开头"
        "（例如 refund-if-delivered）"),
    "template.bad_name_suggested": (
        "{name} is not a template name: use 1-64 letters, digits, - or _, starting with a "
        "letter or digit; {suggestion} would do",
        "{name} 不是有效的模板名：请用 1 到 64 个字母、数字、- 或 _，以字母或数字开头；"
        "可以用 {suggestion}"),
    "template.name_taken": (
        "a template named {name} already exists; pick another name, or delete it first: "
        "python -m core templates delete {name}",
        "已有名为 {name} 的模板；请换一个名字，或先删除它：python -m core templates delete "
        "{name}"),
    "template.not_found": ("no template {name}; list them with: python -m core templates list",
                           "没有模板 {name}；查看所有模板：python -m core templates list"),
    "template.no_plan": ("run {run_id} has no plan to save as a template",
                         "运行 {run_id} 没有可保存为模板的计划"),
    "template.unknown_parameter": (
        "the template has no parameter {name}; its parameters are: {parameters}",
        "模板没有参数 {name}；它的参数是：{parameters}"),
    "template.missing_parameters": (
        "give every parameter of the template with --param NAME=VALUE; missing: {missing} "
        "(its parameters are: {parameters})",
        "请用 --param 名称=值 给出模板的每个参数；缺少：{missing}（它的参数是：{parameters}）"),
    "template.not_a_number": ("parameter {name} takes a number, not {value}",
                              "参数 {name} 需要一个数字，而不是 {value}"),
    "template.run_alone": (
        "--template runs a saved plan as it is: drop the request and --plan, and give the "
        "values with --param NAME=VALUE",
        "--template 直接运行保存的计划：请去掉请求和 --plan，并用 --param 名称=值 给出参数"),
    "template.bad_param": ("--param {given} is not NAME=VALUE; write it like --param name=value",
                           "--param {given} 不是 名称=值 的形式；请写成 --param name=value"),
    # ---- lessons of a tool step that ran without the arguments it requires ------------
    "lesson.tool_args_need_llm": ("without an LLM, write every argument {tool} requires "
                                  "into the step \"{description}\"; nothing fills them in "
                                  "at run time",
                                  "没有大模型时，请在步骤“{description}”中写明 {tool} 的全部"
                                  "必填参数；运行时没有谁能补全它们"),
    "lesson.tool_args_hint": ("write the arguments into the step's args, or configure "
                              "OPENAI_API_KEY and run again",
                              "在步骤参数中写明参数，或配置 OPENAI_API_KEY 后重试"),
    # ---- re-running a finished run from one step (core.plan.rerun, core.runs.rerun) -------
    "rerun.unknown_step": ("there is no step {step} to re-run from; the plan's steps are: "
                           "{steps}",
                           "没有可以重新运行的步骤 {step}；计划中的步骤有：{steps}"),
    "rerun.unfinished": ("run {run_id} is {status}; a re-run starts from a finished run "
                         "(completed, failed or cancelled): wait for it to end, or cancel it",
                         "运行 {run_id} 的状态是“{status}”；只有已结束（完成、失败或已取消）"
                         "的运行才能重新运行：请等待它结束，或先取消它"),
    "rerun.missing_args": ("{step} leaves out {missing}, which {tool} requires; give every "
                           "required argument",
                           "{step} 缺少 {tool} 必需的参数 {missing}；请给出所有必需参数"),
    "rerun.changed_meanwhile": ("run {run_id} changed while its re-run was prepared (it is at "
                                "plan version {version} now); look at it again and re-run it",
                                "准备重新运行期间，运行 {run_id} 已发生变化（现在是计划版本 "
                                "{version}）；请重新查看后再重新运行"),
    # ---- exports --------------------------------------------------------------------------
    # ---- the run's timeline (core.runs.timeline: show, the Markdown export) -------------
    "timeline.heading": ("Timeline", "时间线"),
    "timeline.title": ("Timeline: {seconds} s on {lanes} lane(s)",
                       "时间线：共 {seconds} 秒，{lanes} 条并行线"),
    "timeline.lanes": ("L1, L2 … are lanes: steps that ran at the same time sit on separate "
                       "lanes, so a step on L2 ran while another step was running.",
                       "L1、L2……是并行线：同时运行的步骤分在不同的线上；在 L2 上的步骤运行时，"
                       "另有一个步骤也在运行。"),
    "timeline.empty": ("Timeline: no step has started yet.", "时间线：还没有步骤开始执行。"),
    "timeline.legend": ("░ waiting  ┄ demo pace  ▒ for a person  ▓ model  █ tools  ▆ other work",
                        "░ 等待  ┄ 演示节奏  ▒ 等人确认  ▓ 大模型  █ 工具  ▆ 其他工作"),
    "timeline.meter": ("LLM calls: {calls} of about {expected} expected · {tokens} tokens",
                       "大模型调用：{calls} 次（运行前预计约 {expected} 次）· {tokens} 个词元"),
    "timeline.meter_unknown": ("LLM calls: {calls} (no estimate was recorded) · {tokens} tokens",
                               "大模型调用：{calls} 次（没有记录预计次数）· {tokens} 个词元"),
    "timeline.markers": ("Replans and decisions", "重新规划与人工决定"),
    "timeline.marker_replan": ("replanned to v{version}{step}", "重新规划为 v{version}{step}"),
    "timeline.marker_approved": ("{step}{version} approved", "{step}{version} 已批准"),
    "timeline.marker_rejected": ("{step}{version} rejected", "{step}{version} 已拒绝"),
    "timeline.kind_queued": ("waiting", "等待"),
    "timeline.kind_pace": ("demo pace", "演示节奏"),
    "timeline.kind_person": ("for a person", "等人确认"),
    "timeline.kind_model": ("model", "大模型"),
    "timeline.kind_tool": ("tools", "工具"),
    "timeline.kind_work": ("work", "执行"),
    "export.unknown_format": ("unknown export format {fmt}; use one of: {formats}",
                              "未知的导出格式 {fmt}；可选：{formats}"),
    "export.no_plan": ("run {run_id} has no plan to draw", "运行 {run_id} 没有可绘制的计划"),
    "export.no_graphviz": (
        "SVG export needs the Graphviz 'dot' program, which is not installed (install "
        "graphviz, e.g. apt-get install graphviz / brew install graphviz), or export with "
        "--format dot",
        "导出 SVG 需要 Graphviz 的 dot 程序，但它没有安装（请安装 graphviz，例如 apt-get "
        "install graphviz / brew install graphviz），或用 --format dot 导出"),
    "export.dot_failed": ("Graphviz 'dot' could not run ({error}); try --format dot",
                          "Graphviz 的 dot 程序无法运行（{error}）；请改用 --format dot"),
    "export.dot_error": ("Graphviz 'dot' failed: {error}; try --format dot",
                         "Graphviz 的 dot 程序出错：{error}；请改用 --format dot"),
    # ---- rehearsals (core.execution.rehearsal) ----------------------------------------------
    "rehearsal.no_field": (
        "{step}: {reference} reads {field} of {walked}, which {tool}'s declared result does not "
        "have{known}; fix the reference",
        "{step}：{reference} 读取 {walked} 的 {field}，但 {tool} 声明的结果里没有这个字段{known}；"
        "请修改这个引用"),
    "rehearsal.declares": (" (it declares: {fields})", "（它声明的字段有：{fields}）"),
    "rehearsal.not_an_object": (" (it is not an object)", "（它不是对象）"),
    "rehearsal.never_holds": (
        "{step}: {comparison} in its condition can never be true ({declared})",
        "{step}：条件中的 {comparison} 永远不会成立（{declared}）"),
    "rehearsal.always_holds": (
        "{step}: {comparison} in its condition is always true ({declared})",
        "{step}：条件中的 {comparison} 总是成立（{declared}）"),
    "rehearsal.declared_values": ("{field} is one of {values}", "{field} 只会是 {values} 之一"),
    "rehearsal.args_unfillable": (
        "{step}: {tool} needs {missing}, which the step does not give and no model is "
        "configured to fill; give the value in the step's arguments",
        "{step}：{tool} 需要 {missing}，但这一步没有给出，也没有配置大模型来补全；"
        "请在这一步的参数中填写"),
    "rehearsal.model_fills": ("{step}: the model fills {missing} for {tool} when the step runs",
                              "{step}：执行时由大模型为 {tool} 补全 {missing}"),
    "rehearsal.arg_values": (
        "{step}: the arguments {tool} would get from earlier results do not fit it: {problems}",
        "{step}：{tool} 从前面步骤结果得到的参数不符合要求：{problems}"),
    "rehearsal.side_effect": ("{step}: would call {tool}, which has a side effect (not called "
                              "in a rehearsal)",
                              "{step}：将调用有副作用的 {tool}（排练时不调用）"),
    "rehearsal.not_checked": ("{step}: what it reads from {source} is not checked: {why}",
                              "{step}：它从 {source} 读取的内容未检查：{why}"),
    "rehearsal.why_no_schema": ("{tool} declares no result shape (output schema)",
                                "{tool} 没有声明结果的结构（输出模式）"),
    "rehearsal.why_reasoning": ("{source} is a reasoning step whose result is not declared",
                                "{source} 是推理步骤，其结果没有声明结构"),
    # ---- traces (core.base.tracing) -------------------------------------------------------
    "tracing.sdk_missing": (
        "OTEL_EXPORTER_OTLP_ENDPOINT is set, but the OpenTelemetry SDK is missing ({module}): "
        "install it with pip install -r requirements.txt; runs go on without traces.",
        "已设置 OTEL_EXPORTER_OTLP_ENDPOINT，但缺少 OpenTelemetry SDK（{module}）：请用 "
        "pip install -r requirements.txt 安装；运行照常进行，但不导出追踪。"),
    "tracing.protocol_unsupported": (
        "PlanBoard exports traces over OTLP/HTTP (protobuf) only, not {protocol}: set "
        "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf and point the endpoint at the collector's "
        "HTTP port (4318 by default); runs go on without traces.",
        "PlanBoard 只通过 OTLP/HTTP（protobuf）导出追踪，不支持 {protocol}：请设置 "
        "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf，并把端点指向采集器的 HTTP 端口（默认 "
        "4318）；运行照常进行，但不导出追踪。"),
    # ---- refining a plan with a sentence (core.planning.refine, python -m core refine) ----
    "refine.empty": ("The sentence is empty; say what the planner should change in the plan.",
                     "这句话是空的；请说明要规划器修改计划的哪些地方。"),
    "refine.needs_model": (
        "Refining a plan needs a model: set OPENAI_API_KEY (and OPENAI_BASE_URL for another "
        "provider), or edit the plan by hand.",
        "修改计划需要大模型：请设置 OPENAI_API_KEY（其他服务商再设置 OPENAI_BASE_URL），"
        "或手动编辑计划。"),
    "refine.unusable": (
        "The planner's revision could not be used ({errors}); try another sentence or edit "
        "the plan by hand.",
        "规划器修改后的计划无法使用（{errors}）；请换一种说法，或手动编辑计划。"),
    "refine.run_executing": (
        "run {run_id} is {status} and being executed; refine it once it has stopped (pause "
        "or cancel it first).",
        "运行 {run_id} 状态为 {status}，正在执行；请等它停止后再修改（先暂停或取消）。"),
    "refine.no_plan": ("run {run_id} has no plan to refine; start a new request.",
                       "运行 {run_id} 没有可修改的计划；请提交新的请求。"),
    # ---- plan variants (core.runs.variants, plan --variants, the Plan page) ---------------
    "variants.bad_count": ("--variants takes a number from 1 to {most}, not {given}.",
                           "--variants 只能是 1 到 {most} 之间的数，不能是 {given}。"),
    "variants.offline": (
        "Variants need a model (the offline planner knows one plan per request): here is the "
        "one plan. Set OPENAI_API_KEY to compare variants.",
        "对比多个方案需要大模型（离线规划器对每个请求只有一个计划）：下面是这一个计划。"
        "设置 OPENAI_API_KEY 后即可对比方案。"),
    "variants.identical": ("The \"{angle}\" variant came out the same as the \"{same}\" one: "
                           "shown once.", "“{angle}”方案与“{same}”方案完全相同：只显示一次。"),
    "variants.angle.parallel": ("most parallel", "最大并行"),
    "variants.angle.few_tools": ("fewest tools", "最少工具"),
    "variants.angle.cheap": ("cheapest in model calls", "最少大模型调用"),
    # ---- what core writes into plans, answers, lessons and run warnings, in the language
    # decided once where the request enters -------------------------------------------
    "plan.fallback": (
        "The planner's output could not be used, so a simple two-step plan is used instead",
        "规划器的输出无法使用，已改用简单的两步计划"),
    "followup.goal_line": ("Follow-up: {text}", "追加：{text}"),
    "followup.synthesis": (
        "Answer the follow-up using the results so far",
        "结合之前的结果，回答追加的请求"),
    "answer.plan_adjusted": ("Plan adjusted: ", "计划调整："),
    "plan.synthesis_step": ("Combine the results above into the final answer for the user",
                            "综合以上结果，给出最终回复"),
    "plan.fallback_work": ("Work on the request directly: {request}",
                           "直接处理用户的请求：{request}"),
    "diff.none": ("The plan did not change.", "计划没有变化。"),
    "diff.added": ("added", "新增"),
    "diff.removed": ("removed", "删除"),
    "diff.changed": ("changed", "修改"),
    "diff.plan": ("plan", "计划"),
    "diff.phase": ("phase", "阶段"),
    "answer.tool_step": ("Look up with {tool}", "用 {tool} 查询"),
    "answer.answer_step": ("Answer the request", "回答请求"),
    "answer.not_done": ("What could not be done:", "未完成的步骤："),
    "answer.uncovered": (
        "⚠️ No step of the plan looked into this part of the request, so nothing the answer "
        "says about it comes from a result: \"{clause}\"",
        "⚠️ 计划中没有步骤处理请求的这一部分，回答中关于它的内容都没有结果作依据：“{clause}”"),
    "answer.left_out": (
        "⚠️ The answer above does not say what {step} ({description}) found: {result}",
        "⚠️ 以上回答没有提到 {step}（{description}）的结果：{result}"),
    "answer.other_expression": (
        "⚠️ The answer gives {value} for {said}, but {value} is what {step} computed for "
        "{computed}; {said} is {right}",
        "⚠️ 回答说 {said} 等于 {value}，但 {value} 是 {step} 对 {computed} 的计算结果；"
        "{said} 等于 {right}"),
    "answer.asked_for": (
        "⚠️ The request asks for {fields}, which {step} ({description}) found, but the answer "
        "above does not state it: {found}",
        "⚠️ 请求问到了 {fields}，{step}（{description}）已经查到，但以上回答没有给出：{found}"),
    "answer.receipt_line": (
        "- {step_id} ({description}): {told}",
        "- {step_id}（{description}）：{told}"),
    "answer.receipts": ("Done on your behalf:", "已执行的操作："),
    "run.check_failed": (
        "the success check of {step} failed: {error}",
        "{step} 的成功检查没有完成：{error}"),
    "run.replan_needs_llm": (
        "Replanning needs an LLM; offline, the run finishes with what completed.",
        "重规划需要大模型；离线时运行以已完成的结果结束。"),
    "run.checkpoint_failed": (
        "the checkpoint after {after} changed nothing: {error}",
        "{after} 之后的检查点没有生效：{error}"),
    "run.checkpoint_unusable": (
        "the checkpoint after {after} gave an unusable plan: {problems}",
        "{after} 之后的检查点给出的计划不可用：{problems}"),
    "run.checkpoint_refused": (
        "the checkpoint after {after} was refused: it would drop {dropped} while {failed} "
        "failed and is not replanned yet (its reason: {reason})",
        "{after} 之后的检查点被拒绝：{failed} 失败、尚未重规划，此时不能去掉 {dropped}（检查点"
        "的理由：{reason}）"),
    "run.failed_ignorable": (
        "{step} ({description}) failed but was ignorable: {error}",
        "{step}（{description}）失败但可忽略：{error}"),
    "run.checkpoints_spent": ("checkpoints made {count} versions; they change the plan no more",
                              "检查点已生成 {count} 个版本，之后不再调整计划"),
    "run.criteria_unmet": (
        "{step} did not meet its success criteria: {detail}",
        "{step} 没有达到成功标准：{detail}"),
    "step.needs_approval": (
        "needs approval: plan v{version} added or changed this side-effecting step after "
        "v{approved} was approved, and nobody approved it",
        "需要批准：计划 v{version} 在 v{approved} 获批后新增或修改了这个有副作用的步骤，没有人"
        "批准它"),
    "check.no_criteria": ("the step has no success criteria", "该步骤没有成功标准"),
    "check.not_completed": ("the step did not complete ({status})", "步骤没有完成（{status}）"),
    "check.needs_llm": (
        "not checked (\"{criteria}\" needs an LLM to judge)",
        "未检查“{criteria}”：需要大模型判断"),
    "check.asks_for_information": (
        "not an answer: it asks for information it was supposed to gather",
        "这不是答案：它在索要本该由它收集的信息"),
    "check.apologises": (
        "not an answer: it apologises that it cannot do it",
        "这不是答案：它在道歉并表示做不到"),
    "check.announces": (
        "not an answer: it announces what it will do instead of doing it",
        "这不是答案：它只是在说打算怎么做，并没有去做"),
    "check.restates": ("not an answer: it restates the question", "这不是答案：它只是复述了问题"),
    "check.expression_true": ("the expression \"{criteria}\" is true", "表达式“{criteria}”为真"),
    "check.expression_false": ("the expression \"{criteria}\" is false", "表达式“{criteria}”为假"),
    "check.result_size": ("the result holds {size} item(s)", "结果包含 {size} 条"),
    "check.field_set": ("the result's {field} is set", "结果字段 {field} 有值"),
    "check.field_empty": ("the result's {field} is missing or empty", "结果字段 {field} 为空"),
    "change.step": ("{step} ({description})", "{step}（{description}）"),
    "change.dropped": ("dropped {steps}", "去掉了 {steps}"),
    "change.added": ("added {steps}", "新增了 {steps}"),
    "change.changed": ("changed {steps}", "修改了 {steps}"),
    "change.none": ("the plan did not change", "计划没有变化"),
    "checkpoint.nothing_left": ("nothing left to check", "没有待执行的步骤"),
    "checkpoint.every_step": ("every-step replan after {steps}", "每步重规划：{steps} 已完成"),
    "answer.no_source_reason": (
        "no knowledge-base source covers the question",
        "没有资料涵盖这个问题"),
    "answer.no_source": (
        "No source in the knowledge base covers this question, so it is not answered here. Try "
        "plan mode (the tools may find it), or ask a person.",
        "知识库里没有资料涵盖这个问题，因此这里不作回答。可以改用规划模式（让工具去查），或联系"
        "人工客服。"),
    "answer.quoted_from": ("From \"{title}\":", "根据《{title}》："),
    "answer.quoted_as_written": (
        "From \"{title}\", quoted as it is written (it has no English):",
        "根据《{title}》，按原文引用（文档没有中文）："),
    "answer.quoted_source": (
        "(source: {source}, local knowledge base)",
        "（来源：{source}，本地知识库）"),
    "answer.earlier_not_done": ("an earlier step did not complete", "前置步骤没有完成"),
    "answer.direct_no_side_effects": (
        "direct mode never runs side effects; use plan mode",
        "直接模式不执行有副作用的操作，请使用规划模式"),
    "lesson.unfinished": ("the run did not finish", "运行没有完成"),
    "lesson.cover_request": (
        "check that the plan covers every part of the request and give each step a success "
        "criterion",
        "检查计划是否覆盖了请求的每个部分，并为每步写明成功标准"),
    "lesson.reasoning_step": ("a reasoning step", "推理步骤"),
    "lesson.step_failed": (
        "{step} ({description}) failed: {error}",
        "{step}（{description}）失败：{error}"),
    "lesson.needs_llm": (
        "without an LLM, do not plan a reasoning step for \"{description}\"; use a tool step "
        "with explicit arguments",
        "没有大模型时，不要用推理步骤做“{description}”，改用带明确参数的工具步骤"),
    "lesson.needs_llm_hint": (
        "configure OPENAI_API_KEY and run again",
        "配置 OPENAI_API_KEY 后重试"),
    "lesson.unknown_tool": (
        "use only registered tools; {tool} does not exist",
        "只使用已注册的工具，{tool} 不存在"),
    "lesson.unknown_tool_hint": ("use a registered tool instead", "换用已注册的工具"),
    "lesson.missing": (
        "confirm the id with the user before calling {tool}; {error}",
        "调用 {tool} 前先向用户确认编号，{error}"),
    "lesson.missing_hint": ("ask the user for the correct id", "向用户确认正确的编号"),
    "lesson.transient": (
        "{tool} can time out or be briefly unavailable; run fewer calls in parallel and allow "
        "a retry",
        "{tool} 可能超时或暂时不可用，减少并行调用并允许重试"),
    "lesson.transient_hint": ("retry later with fewer parallel steps", "稍后重试，减少并行步骤"),
    "lesson.arguments": (
        "give {tool} every argument its schema requires ({error})",
        "调用 {tool} 时给出它需要的全部参数（{error}）"),
    "lesson.arguments_hint": (
        "fill the arguments of {tool} from earlier results",
        "从前面步骤的结果中填好 {tool} 的参数"),
    "lesson.other_route": (
        "when {tool} fails ({error}), take another route (another tool or a reduced answer) "
        "instead of repeating the same call",
        "{tool} 失败（{error}）时，换一条路线（其他工具或缩小回答范围），不要重复同样的调用"),
    "lesson.check_with": ("check with {tool}", "先用 {tool} 查询"),
    "lesson.check_record": ("look up the record it acts on", "先查询它要操作的记录"),
    "lesson.refused": (
        "before {tool}, {check} that the action is allowed now, and make {tool} conditional on "
        "what it finds ({source}.<field> == <value>)",
        "调用 {tool} 之前{check}，确认此时允许这样做，并把 {tool} 的条件写成对查询结果的判断（"
        "{source}.<字段> == <取值>）"),
    "lesson.refused_hint": ("look the record up first, then decide", "先查询，再决定是否执行"),
    "lesson.replanned_steps": ("the replanned steps", "重新规划的步骤"),
    "lesson.tool_failed": ("{step} ({tool}) failed: {error}", "{step}（{tool}）失败：{error}"),
    "lesson.fixed_by": (
        "when {tool} failed ({error}), using {fix} instead completed the task",
        "{tool} 失败（{error}）时，改用 {fix} 成功完成了任务"),
    # ---- a plan's problems and what editing it changed (Plan.validate, core.plan.edit,
    # core.plan.arg_form): each names its step; a face words them in its language -------
    "plan.no_steps": (
        "the plan has no steps; add at least one step",
        "计划里没有步骤；请至少添加一个步骤"),
    "plan.duplicate_id": (
        "{step} appears more than once; give every step its own id",
        "{step} 出现了不止一次；每个步骤需要自己的编号"),
    "plan.bad_id": (
        "{step} is not a valid id; ids look like s1, s2, s3",
        "{step} 不是有效的编号；编号形如 s1、s2、s3"),
    "plan.cycle": (
        "{steps} form a dependency cycle; remove one link",
        "{steps} 形成了循环依赖；请去掉其中一条依赖"),
    "plan.no_description": (
        "{step} has no description; say what the step does",
        "{step} 没有描述；请写明这一步做什么"),
    "plan.depends_on_itself": (
        "{step} depends on itself; remove it from depends_on",
        "{step} 依赖了自己；请把它从 depends_on 中去掉"),
    "plan.unknown_dependency": (
        "{step} depends on unknown step {dependency}",
        "{step} 依赖了不存在的步骤 {dependency}"),
    "run.replan_failed": ("Replanning failed ({error}); the run continued with plan v{version}.",
                          "重新规划失败（{error}），运行按计划 v{version} 继续。"),
    "run.replan_unusable": ("The replanned plan was not usable: {problems}",
                            "重新规划得到的计划无法使用：{problems}"),
    "plan.reads_dropped_step": (
        "{step} depends on or reads {dependency}, which did not complete and is not in the new "
        "version: it has no result; read a completed step ({completed}) or call a tool again",
        "{step} 依赖或引用了 {dependency}，但它没有完成、不在新版本中，没有结果；请引用已完成的"
        "步骤（{completed}）或重新调用工具"),
    "plan.field_of_text": (
        "{step} reads {reference}, but {dependency} has no tool: its result is text, with no "
        "fields; use {whole} for the whole text, or give {dependency} a tool that returns data",
        "{step} 读取 {reference}，但 {dependency} 没有工具：其结果是文本，没有字段；"
        "请用 {whole} 读取全文，或给 {dependency} 指定返回数据的工具"),
    "plan.field_of_text_result": (
        "{step} reads {reference}, but {dependency} came back as text, with no fields; use "
        "{whole} for the whole text, or read the field from a step whose tool returns data",
        "{step} 读取 {reference}，但 {dependency} 返回的是文本，没有字段；请用 {whole} 读取全文，"
        "或从返回数据的工具步骤读取该字段"),
    "plan.reference_without_dependency": (
        "{step} refers to {reference} but does not depend on {dependency}; add {dependency} to "
        "depends_on",
        "{step} 引用了 {reference}，却没有依赖 {dependency}；请把 {dependency} 加入 depends_on"),
    "plan.condition_unparsable": (
        "{step} condition does not parse: {error}",
        "{step} 的条件无法解析：{error}"),
    "plan.condition_without_dependency": (
        "{step} condition reads {dependency} but does not depend on it; add {dependency} to "
        "depends_on",
        "{step} 的条件读取了 {dependency}，却没有依赖它；请把 {dependency} 加入 depends_on"),
    "plan.condition_unknown_step": (
        "{step} condition reads {dependency}, which is not a step of the plan; rewrite or "
        "clear the condition",
        "{step} 的条件读取了不存在的步骤 {dependency}；请改写或清空这个条件"),
    "plan.unknown_tool": ("{step} uses {error}", "{step} 使用了{error}"),
    "plan.unknown_argument": (
        "{step} gives {tool} an unknown argument {argument}; its parameters are: {parameters}",
        "{step} 给 {tool} 传了未知参数 {argument}；它的参数是：{parameters}"),
    "plan.argument_value": (
        "{step} argument {argument} for {tool}: {detail}",
        "{step} 给 {tool} 的参数 {argument} 不对：{detail}"),
    "word.none": ("none", "无"),
    "edit.inherited": (
        "{step} now depends on {steps} (what the deleted step depended on), so the order is "
        "kept",
        "{step} 改为依赖 {steps}（被删步骤的依赖），保持原来的先后顺序"),
    "edit.arguments_dropped": (
        "{step}: removed the argument(s) {arguments}, which read a deleted step; the model "
        "fills them in at run time (offline, type them in)",
        "{step} 的参数 {arguments} 引用了被删除的步骤，已去掉：运行时由模型补上（离线时请手动填"
        "写）"),
    "edit.condition_reads_deleted": (
        "{step} condition reads the deleted {steps}: rewrite or clear it (it is kept so that "
        "the step does not run unconditionally)",
        "{step} 的条件读取了被删除的 {steps}：请改写或清空条件（保留它，以免这一步变成无条件执"
        "行）"),
    "edit.args_not_json": (
        "{step} args are not valid JSON ({error}); the previous args are kept until you fix "
        "the cell",
        "{step} 的参数不是有效的 JSON（{error}）；改好这一格之前沿用原来的参数"),
    "edit.args_not_object": (
        "{step} args must be a JSON object like {{\"name\": \"value\"}}; the previous args are "
        "kept until you fix the cell",
        "{step} 的参数必须是 JSON 对象，例如 {{\"参数\": \"取值\"}}；改好这一格之前沿用原来的参"
        "数"),
    "edit.field_not_json": ("{field} is not valid JSON ({error})",
                            "{field} 不是有效的 JSON（{error}）"),
    "edit.tool_changed": (
        "{step} now uses {tool}: removed the argument(s) {arguments}, which it does not take",
        "{step} 改用 {tool}：去掉了它不接受的参数 {arguments}"),
    "edit.criteria_unparsable": (
        "the success criteria read like an expression but do not parse: {error}",
        "成功标准像一个表达式，但无法解析：{error}"),
    # ---- what is wrong with JSON a person typed (core.base.messages.json_error) ----------
    "json.where_column": ("column {column}", "第 {column} 列"),
    "json.where_line": ("line {line}, column {column}", "第 {line} 行第 {column} 列"),
    "json.unterminated_string": ("the string starting at {where} has no closing quote",
                                 "从{where}开始的字符串缺少结尾的引号"),
    "json.control_character": (
        "a string holds a control character (such as a line break) at {where}",
        "{where}的字符串里有控制字符（例如换行）"),
    "json.bad_escape": ("an invalid backslash escape at {where}", "{where}的反斜杠转义无效"),
    "json.expecting_value": ("a value is missing at {where}", "{where}缺少一个值"),
    "json.expecting_name": ("a property name in double quotes is expected at {where}",
                            "{where}应是双引号括起的属性名"),
    "json.expecting_colon": ("a ':' is missing at {where}", "{where}缺少冒号 ':'"),
    "json.expecting_comma": ("a ',' is missing at {where}", "{where}缺少逗号 ','"),
    "json.extra_data": ("more text follows the value at {where}", "{where}在值之后还有多余的内容"),
    "json.other": ("a syntax error at {where}", "{where}有语法错误"),
    # ---- why a request takes its route (core.planning.routes: a rule's reason code) -----
    "route.empty": ("empty request; planning", "请求为空，交给规划器"),
    "route.condition": (
        "the request has a condition (\"if ...\"), so it needs a plan",
        "请求包含条件判断（如“到了的话……”），需要先规划再执行"),
    "route.side_effect": (
        "the request asks for an action with a side effect, so it is planned",
        "请求要执行有副作用的操作，需要先核对再执行"),
    "route.chained": (
        "one lookup needs what another finds first, so it is planned",
        "要先查到一个结果，再用它查下一个，需要先规划"),
    "route.parts": (
        "the request has {count} separate parts, so it needs a plan",
        "请求包含 {count} 个子任务，需要先规划再执行"),
    "route.analysis": ("the task needs a multi-step analysis", "任务需要多步分析，需要先规划"),
    "route.lookup": (
        "a single lookup ({names}) that one to three tool calls can do",
        "一个简单的查询（{names}），一到三次工具调用即可完成"),
    "route.knowledge": (
        "a knowledge question (policy, guide or advice) with no id to look up; answered from "
        "the knowledge base",
        "知识问答（政策、说明或选购建议），没有要查询的单号，直接检索知识库回答"),
    "route.several": (
        "the request has several parts, so it is planned",
        "请求包含多个部分，需要先规划"),
    "route.simple": ("a simple request, handled directly", "简单请求，直接处理"),
    "route.no_knowledge_tool": (
        "no tool answers questions from documents; planning",
        "没有能检索文档回答问题的工具，改为规划"),
    "route.no_source": (
        "no knowledge-base source covers it, but tools can ({names}); planning",
        "知识库里没有相关资料，而工具可以回答（{names}），改为规划"),
    "route.person": ("chosen by a person: {mode}", "由用户指定：{mode}"),
    "route.stages": (
        "the request has {count} stages (first … then … finally …), so it is planned in "
        "phases, each expanded into steps when it is reached",
        "请求分成 {count} 个阶段（先……再……最后……），先规划阶段，到达每个阶段时再细化步骤"),
}
