"""web_search against a local SearXNG-like JSON server (no network)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from core.errors import ToolExecutionError
from core.tools.registry import ToolRegistry
from core.tools.research import SEARXNG_ENV, register_research_tools
from core.tools.toolsets import default_registry


class _SearxHandler(BaseHTTPRequestHandler):
    requests: list[dict] = []  # noqa: RUF012 - shared on purpose: the test reads it

    def do_GET(self):
        url = urlparse(self.path)
        params = {k: v[0] for k, v in parse_qs(url.query).items()}
        type(self).requests.append({"path": url.path, **params})
        if params.get("q") == "boom":
            self.send_response(500)
            self.end_headers()
            return
        body = json.dumps({"query": params.get("q"), "results": [
            {"title": f"Result {i} for {params.get('q')}", "url": f"https://example.test/{i}",
             "content": "snippet", "engine": "x"} for i in range(8)
        ]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def searx():
    _SearxHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SearxHandler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_not_registered_without_the_setting():
    registry = ToolRegistry()
    assert register_research_tools(registry, {}) is False
    assert "web_search" not in registry
    assert "web_search" not in default_registry({})


def test_web_search_queries_searxng_json(searx):
    registry = default_registry({SEARXNG_ENV: searx})
    result = registry.call("web_search", {"query": "AI coding tools", "max_results": 3})
    assert result["source"] == "web (SearXNG)"
    assert [r["url"] for r in result["results"]] == [f"https://example.test/{i}" for i in range(3)]
    assert _SearxHandler.requests[-1] == {"path": "/search", "q": "AI coding tools",
                                          "format": "json"}


def test_http_errors_become_tool_errors(searx):
    registry = default_registry({SEARXNG_ENV: searx})
    with pytest.raises(ToolExecutionError, match="HTTP 500"):
        registry.call("web_search", {"query": "boom"})


def test_unreachable_instance_is_a_clear_error(searx):
    registry = default_registry({SEARXNG_ENV: "http://127.0.0.1:9"})
    with pytest.raises(ToolExecutionError, match=SEARXNG_ENV):
        registry.call("web_search", {"query": "x"})


def test_default_registry_reads_os_environ(monkeypatch, searx):
    monkeypatch.setenv(SEARXNG_ENV, searx)
    assert "web_search" in default_registry()
