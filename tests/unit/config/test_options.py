"""The option table: each option with its flag, parser and default."""

from __future__ import annotations

import pytest

from pytest_consistency.config.options import BY_DEST
from pytest_consistency.config.parse import SettingError, Target

TASK = "examples/test_react_tasks.py::test_react[invoice-sender]"


def test_the_option_table_parses_and_refuses() -> None:
    assert BY_DEST["consistency_resample"].parse(f"{TASK}@2") == Target(TASK, 2)
    assert BY_DEST["consistency_resample"].flag == "--consistency-resample"
    assert BY_DEST["consistency_resample_n"].flag == "--consistency-resample-n"
    assert BY_DEST["consistency_resample_from"].flag == "--consistency-resample-from"
    with pytest.raises(SettingError, match="must be at least 1"):
        BY_DEST["consistency_resample_n"].parse("0")
    with pytest.raises(SettingError, match="is not TASK@STEP"):
        BY_DEST["consistency_resample"].parse("nothing")
    assert BY_DEST["consistency_resample_from"].default == 1
