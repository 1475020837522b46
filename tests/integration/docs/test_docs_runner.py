"""The docs runner can fail: each drift issue 18 names, written into a page of its own, fails the way a reader would.

Pages are written into a temporary directory and parsed and run exactly as
tests/integration/docs/test_docs_blocks.py runs the repository's pages.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from docs.blocks import ROOT, DirectiveError, output_mismatch, page_blocks
from docs.run import BlockFailed, command_env, run_commands, run_consistency_yaml, run_each, run_python

FENCE = "```"


def page(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "page.md"
    path.write_text(text.replace("~~~", FENCE))
    return path


def runnable(path: Path) -> list:
    return [b for b in page_blocks(path, root=path.parent) if b.kind not in ("inert", "file")]


def test_a_loop_over_a_folder_that_does_not_exist_fails(tmp_path: Path, pytester: pytest.Pytester) -> None:
    """The A-D loop once ran ``pytest tests/agent``; in a session holding only the page's files that is exit 4."""
    path = page(
        tmp_path,
        "<!-- docs: file=test_agent.py -->\n~~~python\ndef test_ok():\n    pass\n~~~\n\n"
        "~~~bash\nfor group in A B; do pytest tests/agent --consistency-report=$group.json; done\n~~~\n",
    )
    (block,) = runnable(path)
    with pytest.raises(BlockFailed, match="exit status 4"):
        run_commands(block, pytester.path, command_env(block, {}))


def test_the_same_loop_over_the_files_the_page_shows_passes(tmp_path: Path, pytester: pytest.Pytester) -> None:
    path = page(
        tmp_path,
        "<!-- docs: file=tests/agent/test_agent.py -->\n~~~python\ndef test_ok():\n    pass\n~~~\n\n"
        "~~~bash\nfor group in A B; do pytest tests/agent --consistency-report=$group.json; done\n~~~\n",
    )
    (block,) = runnable(path)
    run_commands(block, pytester.path, command_env(block, {}))
    assert (pytester.path / "B.json").is_file()


def test_shown_output_that_the_command_does_not_print_fails(tmp_path: Path, pytester: pytest.Pytester) -> None:
    """A figure copied from an older run (6 tasks, 6.7 pp) is not what the session prints now."""
    path = page(
        tmp_path,
        "<!-- docs: file=test_x.py -->\n~~~python\nimport pytest\n\n"
        "@pytest.mark.repeat_consistency(n=2)\ndef test_x(consistency):\n    consistency.record(1)\n~~~\n\n"
        "~~~console\n$ pytest -q\n...\ntasks 6, repetitions n=2, scored at k=2\n...\n~~~\n",
    )
    (block,) = runnable(path)
    with pytest.raises(BlockFailed, match="tasks 6, repetitions"):
        run_commands(block, pytester.path, command_env(block, {}))


def test_an_unexpected_exit_status_fails(tmp_path: Path, pytester: pytest.Pytester) -> None:
    path = page(tmp_path, "<!-- docs: exit=1 -->\n~~~console\n$ pytest -q --co\n~~~\n")
    (block,) = runnable(path)
    with pytest.raises(BlockFailed, match="exited 5, the page expects 1"):
        run_commands(block, pytester.path, command_env(block, {}))


def test_a_misspelt_key_in_a_consistency_yaml_sample_fails(tmp_path: Path, pytester: pytest.Pytester) -> None:
    path = page(tmp_path, "~~~yaml\n# consistency.yaml\ngates:\n  consistency_gap_maxx: 12\n~~~\n")
    (block,) = runnable(path)
    assert block.kind == "consistency-yaml"
    with pytest.raises(BlockFailed, match=r"unknown setting 'gates\.consistency_gap_maxx'"):
        run_consistency_yaml(block, pytester.path, command_env(block, {}))


def test_a_python_block_that_raises_fails(tmp_path: Path) -> None:
    path = page(tmp_path, "~~~python\nfrom pytest_consistency import no_such_name\n~~~\n")
    (block,) = runnable(path)
    with pytest.raises(ImportError):
        run_python(block, tmp_path)


def test_continue_runs_after_the_pages_earlier_python(tmp_path: Path) -> None:
    path = page(tmp_path, "~~~python\nx = 2\n~~~\n\n<!-- docs: continue -->\n~~~python\nassert x == 2\n~~~\n")
    first, second = runnable(path)
    run_python(second, tmp_path)
    assert second.chain == (first,)


@pytest.mark.parametrize(
    "text, message",
    [
        ('<!-- docs: skip="" -->\n~~~bash\nls\n~~~\n', "skip needs a reason"),
        ("<!-- docs: skip -->\n~~~bash\nls\n~~~\n", "unknown directive word 'skip'"),
        ("<!-- docs: exit=1 -->\n\nSome prose.\n\n~~~bash\nls\n~~~\n", "is not right before a code block"),
        ("<!-- docs: file=test_x.py -->\n~~~python\npass\n~~~\n", "not followed by a console or bash block"),
        ("<!-- docs: server=gemini -->\n~~~console\n$ ls\n~~~\n", "server=gemini is not one of"),
        ("<!-- docs: colour=red -->\n~~~bash\nls\n~~~\n", "unknown directive word 'colour=red'"),
        ("<!-- docs: venv=/opt/venv -->\n~~~bash\nls\n~~~\n", "venv=/opt/venv is not a venv of the repository's"),
        ("<!-- docs: venv=.venv-x -->\n~~~python\npass\n~~~\n", "venv= is for console and bash blocks"),
        ("<!-- docs: by=tests/test_x.py -->\n~~~python\npass\n~~~\n", "by= is for console and bash blocks"),
        ("<!-- docs: by=../elsewhere/test_x.py -->\n~~~bash\nls\n~~~\n", "by=../elsewhere/test_x.py is not a test"),
        ("<!-- docs: by=tests/helpers.py -->\n~~~bash\nls\n~~~\n", "by=tests/helpers.py is not a test file"),
    ],
    ids=[
        "empty reason",
        "bare skip",
        "orphan",
        "file never run",
        "server",
        "unknown key",
        "venv path",
        "venv python",
        "by python",
        "by outside",
        "by not a test",
    ],
)
def test_a_directive_that_cannot_be_read_fails_the_page(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(DirectiveError, match=message):
        page_blocks(page(tmp_path, text), root=tmp_path)


def test_a_venv_blocks_commands_are_that_venvs(tmp_path: Path) -> None:
    """``venv=.venv-openai2``: its ``pytest`` and ``python`` come first, not the test venv's."""
    (block,) = runnable(page(tmp_path, "<!-- docs: venv=.venv-openai2 -->\n~~~bash\npython -V\n~~~\n"))
    env = command_env(block, {})
    assert env["PATH"].split(os.pathsep)[0] == str(ROOT / ".venv-openai2" / "bin")
    assert env["PYTHON"] == str(ROOT / ".venv-openai2" / "bin" / "python")


def test_a_block_left_to_a_test_file_runs_there_as_the_page_shows_it(tmp_path: Path, pytester: pytest.Pytester) -> None:
    """``by=``: not run by the runner (kind ``claimed``); ``claimed`` hands it to the file it names, whose
    ``run_each`` checks the exit status and the shown lines as the runner would."""
    text = (
        "<!-- docs: file=test_x.py -->\n~~~python\ndef test_x():\n    pass\n~~~\n\n"
        "<!-- docs: by=tests/integration/docs/test_x.py -->\n~~~console\n$ pytest -q test_x.py\n...\n3 passed\n~~~\n"
    )
    (block,) = runnable(page(tmp_path, text))
    assert block.kind == "claimed" and [f.options["file"] for f in block.files] == ["test_x.py"]
    with pytest.raises(BlockFailed, match="does not print what the page shows: shown line not in the output"):
        next(run_each(block, pytester.path, command_env(block, {})))
    assert (pytester.path / "test_x.py").is_file()  # the session directory as the page has it


def test_blocks_shown_inside_a_longer_fence_are_not_run(tmp_path: Path) -> None:
    text = "````markdown\n<!-- docs: file=x.py -->\n~~~python\nraise SystemExit(1)\n~~~\n````\n"
    blocks = page_blocks(page(tmp_path, text), root=tmp_path)
    assert [b.language for b in blocks] == ["markdown"]


def test_output_matching() -> None:
    real = ["header", "", "a", "b  ", "c", "== 3 passed in 1.23s =="]
    assert output_mismatch(("...", "a", "b", "...", "3 passed in 0.01s"), real) is None
    assert output_mismatch(("a", "c"), real) is not None  # shown together, printed apart
    assert output_mismatch(("b", "a"), real) is not None  # order
    assert output_mismatch(("http://127.0.0.1:1/v1",), ["http://127.0.0.1:45123/v1"]) is None
