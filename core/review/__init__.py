"""Plans from agents built elsewhere, reviewed by a person: taken in, stored, decided, followed.

An agent (a LangGraph graph, an OpenAI Agents SDK agent, a coding assistant in plan mode)
sends its plan with its tools' schemas (:mod:`core.review.intake`, its tools read by
:mod:`core.review.declared_tools`, a Markdown plan by :mod:`core.review.markdown`); the
plan is stored as a run waiting for a person (:mod:`core.review.reviews`), who approves
it (edited or not) or rejects it; the agent then reports its steps as AG-UI events
(:mod:`core.review.agent_events`), and any run can be followed as AG-UI events
(:mod:`core.review.agui_stream`).
"""
