"""MCP servers that never get going: ``exit`` (dies at once, saying why on stderr),
``hang`` (never answers), ``garbage`` (writes something that is not JSON-RPC), ``leak``
(dies saying its API_TOKEN on stderr: the token must not reach PlanBoard's records).

Run as ``python -m tests.mcp_servers.broken_start MODE``.
"""

from __future__ import annotations

import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "exit"

if MODE == "exit":
    print("cannot open the database at /nowhere/db.sqlite", file=sys.stderr, flush=True)
    sys.exit(2)
elif MODE == "leak":
    print(f"token {os.environ.get('API_TOKEN')} was refused", file=sys.stderr, flush=True)
    sys.exit(2)
elif MODE == "hang":
    time.sleep(3600)
elif MODE == "garbage":
    sys.stdin.readline()  # the initialize request
    print("Welcome to my server! Type HELP for help.", flush=True)
    time.sleep(3600)
