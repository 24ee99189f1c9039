#!/usr/bin/env bash
# Refresh the README's screenshots in docs/screenshots/: runs only the browser test, with
# PLANBOARD_SCREENSHOTS_DIR pointing there (a plain test run writes them to a temporary
# folder instead). Needs Debian's chromium and playwright, as scripts/test.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/chromium ] || { echo "needs /usr/bin/chromium: run scripts/test.sh once" >&2; exit 1; }
PLANBOARD_SCREENSHOTS_DIR="$PWD/docs/screenshots" \
  python -m pytest -q -p no:cacheprovider -rs tests/browser/test_browser.py "$@"
