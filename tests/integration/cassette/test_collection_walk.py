"""pytest's collection walk leaves out the directories of cassettes, and nothing that could hold a test.

A guard of a saving (``cassette.folders``: a replayed suite's 1,000 cassette files were walked for nothing) and the
tests that try to make the skip lose a test: a test module among the cassettes, a cassette root that is the test
directory itself, ``-n 2``, and collectors other than pytest's own (a doctest glob, YAML and directory collectors,
a conftest's own ``pytest_ignore_collect``), each compared with the same session without the plugin.
"""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI, Step
from suites import run_recorded

TASK = """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_client, consistency):
    reply = pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "a"}])
    consistency.record(reply.choices[0].message.content)
"""

#: Which paths pytest asked about (``pytest_ignore_collect``, called for every entry of every directory it walks),
#: observed without a collection hook of its own: one would turn the skip off (see ``cassette.folders``).
WALKED = """
import json

import pytest

SEEN = []


def pytest_ignore_collect(collection_path, config):
    SEEN.append(str(collection_path))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    with open("walked.json", "w") as handle:
        json.dump(SEEN, handle)
"""


def _record(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> None:
    fake.script(*[Step(text=f"answer {i}") for i in range(3)])
    result = run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly", *args)
    assert result.ret == 0, result.stdout.str()


def _walked(pytester: pytest.Pytester) -> list[str]:
    return list(json.loads((pytester.path / "walked.json").read_text()))


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_replay_walks_none_of_its_cassette_directories(
    pytester: pytest.Pytester, fake: FakeOpenAI, workers: list[str]
) -> None:
    pytester.makepyfile(test_agent=TASK)
    _record(pytester, fake)
    cassettes = pytester.path / "cassettes"
    assert len(list(cassettes.rglob("rep-*.yaml"))) == 3
    pytester.makeconftest(WALKED)
    result = run_recorded(pytester, fake.base_url, "none", "-p", "no:randomly", *workers)
    assert result.ret == 0, result.stdout.str()
    walked = _walked(pytester)
    assert any(p.endswith("test_agent.py") for p in walked)
    assert str(cassettes) in walked  # asked about, and skipped: nothing below it was walked
    assert not [p for p in walked if p.startswith(str(cassettes) + "/")]
    reps = json.loads((pytester.path / "report.json").read_text())["tasks"][0]["repetitions"]
    assert [r["answer"] for r in reps] == ["answer 0", "answer 1", "answer 2"]


def test_a_test_module_among_the_cassettes_is_still_collected_and_run(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    pytester.makepyfile(test_agent=TASK)
    _record(pytester, fake)
    task_dir = next((pytester.path / "cassettes").rglob("rep-1.yaml")).parent
    (task_dir / "test_beside.py").write_text("def test_beside_the_cassettes():\n    pass\n")
    (pytester.path / "cassettes" / "test_top.py").write_text("def test_at_the_root():\n    pass\n")
    result = run_recorded(pytester, fake.base_url, "none", "-p", "no:randomly", "-v")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*test_beside_the_cassettes PASSED*", "*test_at_the_root PASSED*"])
    result.assert_outcomes(passed=5)


def test_a_cassette_root_that_is_the_test_directory_loses_no_test(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    """``--consistency-cassettes=.``: the cassettes sit beside the test modules; only their own directories are
    skipped, never one that holds a test."""
    pytester.makepyfile(test_agent=TASK)
    tests = pytester.mkpydir("more")
    (tests / "test_other.py").write_text("def test_other():\n    pass\n")
    _record(pytester, fake, "--consistency-cassettes=.")
    assert (pytester.path / "test_agent" / "test_task" / "rep-1.yaml").is_file()
    pytester.makeconftest(WALKED)
    result = run_recorded(pytester, fake.base_url, "none", "-p", "no:randomly", "--consistency-cassettes=.")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=4)
    walked = _walked(pytester)
    assert not [p for p in walked if "rep-" in p]
    assert any(p.endswith("test_other.py") for p in walked)


def test_a_cassette_file_named_on_the_command_line_is_collected_as_without_the_plugin(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    """pytest does not ask about the paths it was given: a cassette named on the command line gets pytest's own
    answer (no collector for it), the same with the plugin as without it."""
    pytester.makepyfile(test_agent=TASK)
    _record(pytester, fake)
    cassette = next((pytester.path / "cassettes").rglob("rep-1.yaml"))
    without = pytester.runpytest("-p", "no:consistency", str(cassette))
    result = run_recorded(pytester, fake.base_url, "none", str(cassette))
    assert result.ret == without.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines([f"ERROR: not found: {cassette}"])


def _collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:randomly", *args)
    return sorted(line for line in result.stdout.lines if "::" in line)


def _cassettes(root, names: list[str]) -> None:  # type: ignore[no-untyped-def]
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(">>> 1 + 1\n2\n")  # a doctest, should anything collect it


#: An item, a file of one such item and a directory of one: what the collectors below make of what they collect.
ITEMS = """
import pytest

class Case(pytest.Item):
    def runtest(self):
        pass

class Cases(pytest.File):
    def collect(self):
        yield Case.from_parent(self, name="case")

class Golden(pytest.Directory):
    def collect(self):
        yield Case.from_parent(self, name="golden")
"""

#: Layouts in which something other than pytest's defaults would collect from a cassette-only directory (found by an
#: adversarial review of the skip): each must collect the same with the plugin as without it.
COLLECTORS = {
    "doctest-glob": ("", ["--doctest-glob=*.yaml"]),
    "yaml-collector": (
        ITEMS
        + """
def pytest_collect_file(file_path, parent):
    if file_path.suffix in (".yaml", ".json"):
        return Cases.from_parent(parent, path=file_path)
""",
        [],
    ),
    "directory-collector": (
        ITEMS
        + """
def pytest_collect_directory(path, parent):
    if path.name.startswith("case_"):
        return Golden.from_parent(parent, path=path)
""",
        [],
    ),
    "ignore-false": (
        ITEMS
        + """
def pytest_ignore_collect(collection_path, config):
    if "cassettes" in collection_path.parts:
        return False

def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".yaml":
        return Cases.from_parent(parent, path=file_path)
""",
        [],
    ),
}


@pytest.mark.parametrize("layout", list(COLLECTORS))
@pytest.mark.parametrize("root", ["cassettes", "."])
def test_what_another_collector_would_collect_among_the_cassettes_is_still_collected(
    pytester: pytest.Pytester, layout: str, root: str
) -> None:
    conftest, args = COLLECTORS[layout]
    if conftest:
        pytester.makeconftest(conftest)
    pytester.makepyfile(test_a="def test_a():\n    pass\n")
    _cassettes(pytester.path / "cassettes", ["test_agent/test_task/rep-1.yaml", "test_agent/test_task/rep-2.json"])
    _cassettes(pytester.path / "cassettes", ["test_agent/test_task/resample/rep2@3/sample-1.yaml"])
    (pytester.path / "tests" / "case_empty").mkdir(parents=True)
    _cassettes(pytester.path / "tests" / "cases", ["sample-1.json"])
    without = _collected(pytester, "-p", "no:consistency", *args)
    assert len(without) > 1, without
    assert _collected(pytester, f"--consistency-cassettes={root}", *args) == without
