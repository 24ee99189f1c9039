"""Reusable Streamlit widgets of the dashboard (pages import these; core never does)."""
