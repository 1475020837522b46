"""``python -m pytest_consistency.resample TASK [-n M] [--from REP] -- PYTEST_ARGS``: the bisection command."""

from .command import main

raise SystemExit(main())
