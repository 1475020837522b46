"""The session's scratch directories (shared.scratch): a worker uses what the controller handed it and removes
nothing; the process that made a directory removes it, whatever is already gone."""

from __future__ import annotations

from pathlib import Path

from pytest_consistency.shared.scratch import Scratch


def test_a_handed_directory_is_used_as_it_is_and_never_removed(tmp_path: Path) -> None:
    handed = tmp_path / "controllers"
    handed.mkdir()
    scratch = Scratch()
    assert scratch.directory(str(handed), "consistency-ledger-") == handed
    scratch.remove()
    assert handed.is_dir()


def test_the_directories_this_process_made_are_removed_together() -> None:
    scratch = Scratch()
    ledger = scratch.directory(None, "consistency-ledger-")
    board = scratch.directory("", "consistency-board-")  # an empty handed path is none
    assert ledger != board and ledger.is_dir() and board.is_dir()
    assert ledger.name.startswith("consistency-ledger-") and board.name.startswith("consistency-board-")
    (ledger / "slot").write_text("taken")
    scratch.remove()
    assert not ledger.exists() and not board.exists()
    assert scratch.made == []


def test_a_directory_already_gone_does_not_stop_the_others_going() -> None:
    scratch = Scratch()
    first, second = scratch.directory(None, "a-"), scratch.directory(None, "b-")
    first.rmdir()
    scratch.remove()
    assert not second.exists()
