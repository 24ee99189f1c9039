"""Planning: the planner and replanner, plan checks, routing, clarifying questions, offline
plans."""
