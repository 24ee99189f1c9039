"""The fake OpenAI-compatible server as a standalone process, for trying PlanBoard by hand.

    python -m tests.support.fake_openai_server --port 8765 --script replies.json [--latency 0.2]

then point OPENAI_BASE_URL at http://127.0.0.1:8765/v1 with the key it prints.
"""

from __future__ import annotations

import argparse
import json

from tests.support.fake_openai import DEFAULT_KEY, FakeOpenAI, FakeReply, Reply, error

__all__ = ["load_script", "main"]


def load_script(path: str) -> list[Reply]:
    """Replies from a JSON list: strings, {"tool_calls": [{"name", "arguments"}]}, or
    {"error": {"status", "message", "code"}}."""
    with open(path, encoding="utf-8") as handle:
        items = json.load(handle)
    replies: list[Reply] = []
    for item in items:
        if isinstance(item, str):
            replies.append(item)
        elif "error" in item:
            replies.append(error(**item["error"]))
        else:
            calls = [(c["name"], c.get("arguments", {})) for c in item.get("tool_calls", [])]
            replies.append(FakeReply(content=item.get("content"), calls=calls))
    return replies


def main(argv: list[str] | None = None) -> None:
    """Run the fake server in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible server for tests.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--script", help="JSON file with a list of replies")
    parser.add_argument("--key", default=DEFAULT_KEY, help="API key to accept")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per call")
    parser.add_argument("--fallback", default=None,
                        help="text to answer with once the script is used up")
    args = parser.parse_args(argv)
    fallback = args.fallback
    server = FakeOpenAI(api_key=args.key, models=None, latency_s=args.latency, port=args.port,
                        responder=(lambda _body: fallback) if fallback is not None else None)
    if args.script:
        server.script(*load_script(args.script))
    print(f"FakeOpenAI listening on {server.base_url} (key {args.key!r})", flush=True)
    try:
        server._server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()


if __name__ == "__main__":
    main()
