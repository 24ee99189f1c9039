"""Entry point of ``python -m core``."""

from core.cli.main import main

raise SystemExit(main())
