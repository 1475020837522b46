"""The conversion between the cassette formats: lossless on every committed cassette, and careful on the rest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from vcr.serializers import jsonserializer, yamlserializer

from pytest_consistency.cassette.convert import ConvertError, convert, summary_lines
from pytest_consistency.cli import main

ROOT = Path(__file__).resolve().parents[3]

CASSETTE = """interactions:
- request:
    body: '{"model": "m"}'
    headers: {}
    method: POST
    uri: http://127.0.0.1:9/v1/chat/completions
  response:
    body:
      string: 'caf\u00e9 "quoted" \\ back'
    headers: {}
    status:
      code: 200
      message: OK
version: 1
"""


def _committed() -> list[Path]:
    return sorted([*ROOT.glob("cassettes/**/rep-*.yaml"), *ROOT.glob("examples/**/rep-*.yaml")])


def test_every_committed_cassette_converts_to_json_and_back_without_loss(tmp_path: Path) -> None:
    sources = _committed()
    assert len(sources) > 30
    copies = []
    for index, source in enumerate(sources):
        copy = tmp_path / f"c{index}" / "rep-1.yaml"
        copy.parent.mkdir()
        shutil.copyfile(source, copy)
        copies.append(copy)
    originals = [yamlserializer.deserialize(p.read_text()) for p in copies]
    outcome = convert([tmp_path], "json")
    assert outcome.left == [] and len(outcome.converted) == len(copies)
    assert [jsonserializer.deserialize(p.with_suffix(".json").read_text()) for p in copies] == originals
    assert not list(tmp_path.rglob("*.yaml")) and not list(tmp_path.rglob("*.tmp"))
    outcome = convert([tmp_path], "yaml")
    assert outcome.left == [] and len(outcome.converted) == len(copies)
    assert [yamlserializer.deserialize(p.read_text()) for p in copies] == originals


def test_a_binary_body_stays_yaml_and_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "t" / "rep-1.yaml"
    path.parent.mkdir()
    line = next(line for line in CASSETTE.splitlines() if "string:" in line)
    text = CASSETTE.replace(line, "      string: !!binary |\n        //4AYmluYXJ5")
    path.write_text(text)
    assert isinstance(yamlserializer.deserialize(text)["interactions"][0]["response"]["body"]["string"], bytes)
    outcome = convert([tmp_path], "json")
    assert outcome.converted == [] and [p for p, _ in outcome.left] == [path]
    assert "binary body" in outcome.left[0][1]
    assert path.read_text() == text and not path.with_suffix(".json").exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("interactions: [\n", "cannot be read"),
        ("just: a mapping\n", "is not a vcrpy cassette"),
        ("- a\n- list\n", "is not a vcrpy cassette"),
        ("!!python/object:os.system {}\n", "cannot be read"),
    ],
)
def test_a_file_that_is_not_a_readable_cassette_is_left_as_it_is(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "rep-3.yaml"
    path.write_text(content)
    outcome = convert([tmp_path], "json")
    assert [p for p, _ in outcome.left] == [path] and reason in outcome.left[0][1]
    assert path.read_text() == content and not path.with_suffix(".json").exists()


def test_nothing_is_overwritten_when_both_formats_are_there(tmp_path: Path) -> None:
    (tmp_path / "rep-1.yaml").write_text(CASSETTE)
    (tmp_path / "rep-1.json").write_text('{"interactions": [], "version": 1}\n')
    outcome = convert([tmp_path], "json")
    assert outcome.already == [tmp_path / "rep-1.json"]
    assert outcome.left == [(tmp_path / "rep-1.yaml", "rep-1.json is there too; remove the one you do not want")]
    assert (tmp_path / "rep-1.json").read_text() == '{"interactions": [], "version": 1}\n'


def test_a_dry_run_changes_nothing_and_resample_cassettes_are_not_touched(tmp_path: Path) -> None:
    (tmp_path / "rep-1.yaml").write_text(CASSETTE)
    (tmp_path / "resample" / "rep1@2").mkdir(parents=True)
    (tmp_path / "resample" / "rep1@2" / "sample-1.yaml").write_text(CASSETTE)
    outcome = convert([tmp_path], "json", dry_run=True)
    assert outcome.converted == [tmp_path / "rep-1.yaml"]
    assert sorted(p.name for p in tmp_path.rglob("*.*")) == ["rep-1.yaml", "sample-1.yaml"]
    assert summary_lines(outcome, "json", dry_run=True) == [
        "would convert 1 cassette(s) to JSON; 0 already JSON, 0 left as they were"
    ]
    convert([tmp_path], "json")
    assert sorted(p.name for p in tmp_path.rglob("*.*")) == ["rep-1.json", "sample-1.yaml"]


def test_the_command_exits_1_when_a_file_was_left_and_2_without_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rep-1.yaml").write_text("not: a cassette\n")
    assert main(["cassettes", "convert", "--to", "json", str(tmp_path)]) == 1
    assert "left as it is: " in capsys.readouterr().out
    monkeypatch.chdir(tmp_path)  # the default directory, cassettes, is not there
    assert main(["cassettes", "convert", "--to", "json"]) == 2
    assert "cassettes is not a directory" in capsys.readouterr().err
    with pytest.raises(ConvertError, match="choose json or yaml"):
        convert([tmp_path], "toml")


def test_a_wrong_directory_stops_the_command_before_anything_changed(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "rep-1.yaml").write_text(CASSETTE)
    with pytest.raises(ConvertError, match="missing is not a directory"):
        convert([tmp_path / "a", tmp_path / "missing"], "json")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["rep-1.yaml"]


def test_the_converted_file_keeps_the_permissions_of_the_old_one(tmp_path: Path) -> None:
    path = tmp_path / "rep-1.yaml"
    path.write_text(CASSETTE)
    path.chmod(0o644)
    convert([tmp_path], "json")
    assert (tmp_path / "rep-1.json").stat().st_mode & 0o777 == 0o644


def test_a_file_that_cannot_be_written_or_removed_is_left_and_the_others_are_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "rep-1.yaml").write_text(CASSETTE)
    real = tempfile.mkstemp

    def refuse_in_a(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if str(kwargs.get("dir", "")).endswith("/a"):
            raise PermissionError(13, "Permission denied")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tempfile, "mkstemp", refuse_in_a)
    outcome = convert([tmp_path], "json")
    assert outcome.converted == [tmp_path / "b" / "rep-1.yaml"]
    assert outcome.left == [
        (tmp_path / "a" / "rep-1.yaml", "cannot write beside it (Permission denied); left as it is")
    ]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["rep-1.yaml"]


def test_a_symbolic_link_is_reported_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.yaml"
    target.write_text(CASSETTE)
    (tmp_path / "rep-1.yaml").symlink_to(target)
    outcome = convert([tmp_path], "json")
    assert outcome.left == [(tmp_path / "rep-1.yaml", "is a symbolic link; convert the file it points to")]
    assert (tmp_path / "rep-1.yaml").is_symlink() and target.read_text() == CASSETTE


def test_a_symbolically_linked_task_directory_is_reported_file_by_file_not_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A task directory that is a symbolic link is refused as a linked file is: each cassette it holds is named with
    the link and where it points, exit 1, and nothing it points to is changed (it may be another suite's)."""
    elsewhere = tmp_path / "shared" / "test_agent"
    elsewhere.mkdir(parents=True)
    for name in ("rep-1.yaml", "rep-2.yaml"):
        (elsewhere / name).write_text(CASSETTE)
    (elsewhere / "rep-3.json").write_text('{"interactions": [], "version": 1}\n')
    root = tmp_path / "cassettes"
    (root / "test_mod" / "test_plain").mkdir(parents=True)
    (root / "test_mod" / "test_plain" / "rep-1.yaml").write_text(CASSETTE)
    (root / "test_mod" / "test_linked").symlink_to(elsewhere, target_is_directory=True)
    outcome = convert([root], "json")
    assert outcome.converted == [root / "test_mod" / "test_plain" / "rep-1.yaml"]
    linked = root / "test_mod" / "test_linked"
    reason = (
        f"its directory {linked} is a symbolic link (to {elsewhere}); cassettes are converted only where they are: "
        f"convert that directory (pytest-consistency cassettes convert --to json {elsewhere})"
    )
    assert outcome.left == [(linked / "rep-1.yaml", reason), (linked / "rep-2.yaml", reason)]
    assert outcome.already == [linked / "rep-3.json"]
    assert sorted(p.name for p in elsewhere.iterdir()) == ["rep-1.yaml", "rep-2.yaml", "rep-3.json"]
    assert main(["cassettes", "convert", "--to", "json", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"left as it is: {linked / 'rep-1.yaml'}: its directory {linked} is a symbolic link" in out
    assert "converted 0 cassette(s) to JSON; 2 already JSON, 2 left as they were" in out


def test_a_symbolic_link_given_as_the_directory_is_followed(tmp_path: Path) -> None:
    """Named on the command line, the link is what the user asked to convert (as the advice above says to)."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "rep-1.yaml").write_text(CASSETTE)
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    outcome = convert([tmp_path / "link"], "json")
    assert outcome.converted == [tmp_path / "link" / "rep-1.yaml"] and outcome.left == []
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["rep-1.json"]


def test_a_link_to_a_directory_above_it_is_reported_once_not_walked_forever(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "rep-1.yaml").write_text(CASSETTE)
    (tmp_path / "t" / "loop").symlink_to(tmp_path, target_is_directory=True)
    outcome = convert([tmp_path], "json", dry_run=True)
    assert outcome.converted == [tmp_path / "t" / "rep-1.yaml"]
    assert [path for path, _ in outcome.left] == [tmp_path / "t" / "loop" / "t" / "rep-1.yaml"]
