"""Agents built elsewhere with their plans reviewed in PlanBoard: a LangGraph graph
(:mod:`integrations.langgraph_review`) and an OpenAI Agents SDK agent
(:mod:`integrations.agents_review`). Each needs its own framework installed and reaches
PlanBoard only through :mod:`core.review.client`."""
