#!/usr/bin/env bash
# Install everything the tests need, then lint and run every test (browser test included).
set -euo pipefail
cd "$(dirname "$0")/.."
# The script's whole time, printed however it ends: it must stay within five minutes on
# 2 cores.
started=$SECONDS
trap 'echo "scripts/test.sh: $((SECONDS - started)) s in all"' EXIT

# Debian packages: chromium for the browser test, graphviz for SVG export, fonts so that
# the screenshots show Chinese text and emoji, and PostgreSQL for the store's tests on it
# (tests/support/pg.py starts a throwaway cluster; the package's own cluster is not used).
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v dot >/dev/null || missing+=(graphviz)
[ -d /usr/share/fonts/opentype/noto ] || missing+=(fonts-noto-cjk)
[ -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || missing+=(fonts-noto-color-emoji)
compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null || missing+=(postgresql)
if ((${#missing[@]})); then
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

python -m pip install -q -r requirements-dev.txt
# BFCL's data, backends and checker (tests/bench/test_bfcl.py): its other dependencies
# (model clients, torch) are not needed for the multi-turn checker
python -m pip install -q --no-deps 'bfcl-eval>=2026.3.23,<2027'
python -m ruff check .
# Compiled modules are kept: the suite starts hundreds of Python processes (CLI commands,
# workers, served apps) that would each compile the project again. They are compiled once,
# on every core, before the workers start: on a fresh clone the four workers and the first
# processes they start would otherwise each compile the same modules at once (4 s of CPU
# apiece for the modules a worker imports, against 2.4 s for all of them here).
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 0 core ui pages bench demo tests
# Two workers per core (pytest-xdist): much of the suite waits on subprocesses, servers and a
# browser, so while one worker waits another computes (on 2 cores: 437 s with two workers,
# 376-425 s with four); a file's tests stay on one worker (its module fixtures are made
# once), and the files go out longest first, in the order tests/support/module_order.py
# collects them (xdist's own reorder, by number of tests, is off): 298 s before, 260 s
# after. The fault suite (marker `faults`: processes killed, PostgreSQL restarted) takes
# minutes even at one trial each: it runs on its own (README.md).
workers=$((2 * $(nproc)))
python -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder -m "not realmodel and not faults" "$@"
