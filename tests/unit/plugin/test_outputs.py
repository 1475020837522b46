"""The session's outputs (``plugin.outputs``): which are written and in what order, a destination checked before
anything is written, and a write that fails late still reaching the JSON report written after it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.config.settings import Settings
from pytest_consistency.plugin import outputs
from pytest_consistency.plugin.outputs import REPORT, STEP_SUMMARY, Output, check_destination
from pytest_consistency.plugin.state import PluginState


def test_the_json_report_is_the_last_file_and_the_step_summary_comes_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "step.md"))
    settings = Settings(
        report=str(tmp_path / "r.json"),
        md=str(tmp_path / "s.md"),
        html=str(tmp_path / "p.html"),
        output=f"csv={tmp_path / 't.csv'}",
    )
    wanted = [(o.name, o.option, o.path.name) for o in outputs.outputs(settings)]
    assert wanted == [
        ("markdown", "--consistency-md", "s.md"),
        ("html", "--consistency-html", "p.html"),
        ("csv", "--consistency-output", "t.csv"),
        ("json", REPORT, "r.json"),
        ("markdown", STEP_SUMMARY, "step.md"),
    ]


def test_no_step_summary_with_no_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "step.md"))
    assert outputs.outputs(Settings(no_md=True)) == []


def test_a_writable_destination_is_checked_without_a_trace(tmp_path: Path) -> None:
    check_destination(Output("markdown", "--consistency-md", tmp_path / "new" / "s.md"))
    assert [p.name for p in tmp_path.rglob("*")] == ["new"]  # its folder made, as the write would; nothing else


@pytest.mark.parametrize("where", ["directory", "under-a-file"])
def test_a_destination_that_cannot_be_written_raises_before_anything_is_written(tmp_path: Path, where: str) -> None:
    if where == "directory":
        target = tmp_path / "taken"
        target.mkdir()
    else:
        (tmp_path / "plain.txt").write_text("x")
        target = tmp_path / "plain.txt" / "r.json"
    with pytest.raises(OSError) as raised:
        check_destination(Output("json", REPORT, target))
    assert raised.value.strerror


def test_the_step_summary_is_checked_by_opening_it_to_append(tmp_path: Path) -> None:
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    check_destination(Output("markdown", STEP_SUMMARY, step))
    assert step.read_text() == "earlier step\n"
    with pytest.raises(IsADirectoryError):
        check_destination(Output("markdown", STEP_SUMMARY, tmp_path))


def test_a_write_that_fails_late_reaches_the_json_report_written_after_it(tmp_path: Path) -> None:
    """A destination that passed the check and then fails (a folder appeared there): an error, the exit status
    decided again, and the JSON report, written after, rendered again saying so; each file written at most once."""
    summary = build_summary([])
    state = PluginState(settings=Settings())
    (tmp_path / "s.md").mkdir()  # what the check would have refused, had it been there then
    pending = [
        Output("markdown", "--consistency-md", tmp_path / "s.md", "# passed\n"),
        Output("json", REPORT, tmp_path / "r.json", "stale"),
    ]
    decisions = []

    def decide() -> None:
        summary.exit_status = 1 if summary.errors else 0
        summary.passed = summary.exit_status == 0
        decisions.append(summary.exit_status)

    outputs.write(summary, state, pending, decide)
    assert decisions == [1]
    assert summary.errors == [
        f"--consistency-md: cannot write the markdown output to {tmp_path / 's.md'} (Is a directory)"
    ]
    report = (tmp_path / "r.json").read_text()
    assert '"exit_status": 1' in report and "cannot write the markdown output" in report
    assert state.report_path == str(tmp_path / "r.json") and state.written == []


def test_an_output_refused_at_the_check_is_known_before_any_file_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The order of the session end's outputs: every destination checked and every text rendered (again, once an
    output failed, at the exit status that failure gives), then each file written once, already saying so. The writes
    are counted with a spy on the package's own writer, which every file output goes through."""
    from pytest_consistency.report import builtin, json_report

    writes: list[str] = []
    original = json_report.write_text_atomic

    def spy(path: Path, text: str) -> None:
        writes.append(path.name)
        original(path, text)

    monkeypatch.setattr(json_report, "write_text_atomic", spy)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    (tmp_path / "taken").mkdir()
    settings = Settings(
        report=str(tmp_path / "r.json"),
        md=str(tmp_path / "s.md"),
        html=str(tmp_path / "taken"),
    )
    state = PluginState(settings=settings)
    summary = build_summary([])
    summary.exit_status = 0  # as the session end decided it before the outputs
    config = SimpleNamespace(hook=SimpleNamespace(pytest_consistency_report_format=lambda name, config: builtin(name)))
    decisions = []

    def decide() -> None:
        summary.exit_status = 1 if summary.errors else 0
        summary.passed = summary.exit_status == 0
        decisions.append((summary.exit_status, list(writes)))

    pending = outputs.prepare(config, summary, state, decide)  # type: ignore[arg-type]
    assert [o.path.name for o in pending] == ["s.md", "r.json"]
    assert writes == [] and decisions == [(1, [])]  # decided again before anything was written
    outputs.write(summary, state, pending, decide)
    assert writes == ["s.md", "r.json"] and len(decisions) == 1
    assert "❌" in (tmp_path / "s.md").read_text()
    report = json_report.read_report(tmp_path / "r.json")
    assert report.exit_status == 1 and report.passed is False
    assert report.errors == [
        f"--consistency-html: cannot write the html output to {tmp_path / 'taken'} (Is a directory)"
    ]
    assert state.written == [f"markdown: {tmp_path / 's.md'}"] and state.report_path == str(tmp_path / "r.json")


def test_a_json_output_beside_the_report_is_an_output_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--consistency-output json=FILE`` is told from the report by its option, not its format's name."""
    from pytest_consistency.report import builtin

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    settings = Settings(report=str(tmp_path / "r.json"), output=f"json={tmp_path / 'o.json'}")
    state = PluginState(settings=settings)
    summary = build_summary([])
    summary.exit_status = 0
    config = SimpleNamespace(hook=SimpleNamespace(pytest_consistency_report_format=lambda name, config: builtin(name)))
    outputs.write(summary, state, outputs.prepare(config, summary, state, lambda: None), lambda: None)  # type: ignore[arg-type]
    assert summary.errors == []
    assert state.report_path == str(tmp_path / "r.json") and state.written == [f"json: {tmp_path / 'o.json'}"]
