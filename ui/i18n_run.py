"""Labels of the run page's progress, skip reasons, presentation view and demo pace (en, 中文).

Kept apart from :mod:`ui.i18n` (which merges them into its one table) to keep that
module short; each entry is ``key: (English, 中文)``.
"""

from __future__ import annotations

__all__ = ["RUN_PAGE_TEXT"]

RUN_PAGE_TEXT: dict[str, tuple[str, str]] = {
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
    "demo_pace": ("Demo pace (seconds before each step)", "演示节奏（每个步骤前等待的秒数）"),
    "demo_pace_help": ("Slows runs down so that a demo can follow the cards; 0 is off.",
                       "放慢运行，便于演示时看清每个步骤的变化；0 表示关闭。"),
}
