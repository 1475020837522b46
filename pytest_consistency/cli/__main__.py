"""``python -m pytest_consistency.cli``: the ``pytest-consistency`` command, for an environment without its script."""

from pytest_consistency.cli import main

raise SystemExit(main())
