"""The command line in tests: a plan file to run and the fake endpoint in the environment."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fake_openai import FakeOpenAI


def write_plan(tmp_path: Path, steps: list[dict], goal: str = "test goal") -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"goal": goal, "steps": steps}), encoding="utf-8")
    return str(path)


def use_endpoint(monkeypatch, server: FakeOpenAI, key: str | None = None) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", key or server.api_key)
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("PLANBOARD_MAX_RETRIES", "0")
