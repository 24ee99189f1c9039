"""Entry point of ``python -m core``."""

from core.cli import main

raise SystemExit(main())
