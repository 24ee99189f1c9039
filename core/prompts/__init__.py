"""Prompt templates of PlanBoard, one module per role (planning, execution)."""
