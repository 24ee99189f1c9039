"""PlanBoard's engine: plans, planner, executor, scheduler, tools and storage (no Streamlit)."""
