"""Entry point of ``python -m bench``."""

from bench.engine_bench import main

raise SystemExit(main())
