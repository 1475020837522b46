"""``python -m pytest_consistency.resample TASK [-n M] [--from REP] -- PYTEST_ARGS``: the bisection command."""

from pytest_consistency.resample.command import main

raise SystemExit(main())
