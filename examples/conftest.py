import sys
from pathlib import Path

# The example's modules (agent, apps) and the copyable conftest at the repository root.
sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parent.parent)]

from conftest_example import *  # noqa: E402,F403

collect_ignore = ["judges"]  # a suite of its own: pytest examples/judges (docs/judges.md)
