"""A hand-edited cassette whose field has the wrong type is a corrupt cassette, never the agent's failure.

``code: 'OK'`` where the status should be, a header that is not a list of strings, a body that is not text: vcrpy
loads such a file without complaint and fails only when it builds the response, inside the agent's call, where the
error read as the agent's own ``ValueError`` or ``TypeError`` and ``min_pass < 1`` tolerated it. The plugin checks
every field a replay reads when it loads the file: the repetition errors in its setup with a message naming the
file, the field and the fix; the task's verdict is ``error`` and the run fails, whatever ``min_pass`` says.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_edits import CASES, rewrite
from fake_openai import FakeOpenAI, Step
from suites import ONE_CALL_AGENT as AGENT
from suites import load_report, run_recorded


#: One edit per format end to end; every edit in both formats is refused by the persister's unit test
#: (tests/unit/cassette/test_persist.py::test_a_field_of_the_wrong_type_is_a_cassette_error_naming_file_and_field).
@pytest.mark.parametrize(("case", "fmt"), [("status code OK", "yaml"), ("body string a mapping", "json")])
def test_a_field_of_the_wrong_type_is_an_infrastructure_error_never_tolerated(
    pytester: pytest.Pytester, fake: FakeOpenAI, case: str, fmt: str
) -> None:
    fake.script(*[Step(text="widget")] * 3)
    pytester.makepyfile(test_agent=AGENT)
    form = f"--consistency-cassette-format={fmt}"
    assert run_recorded(pytester, fake.base_url, "once", form).ret == 0
    edit, field = CASES[case]
    target = pytester.path / "cassettes" / "test_agent" / "test_task" / f"rep-2.{fmt}"
    rewrite(target, edit)
    fake.reset()
    result = run_recorded(pytester, fake.base_url, "none", form)
    out = result.stdout.str()
    assert result.ret == 1, out  # min_pass=0.5 would tolerate one failure of the agent's: this is none
    assert fake.requests == []
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at setup of test_task[[]rep2[]]*", f"*rep-2.{fmt}*interactions[[]0[]].{field}*"]
    )
    assert "--consistency-record=all" in out  # how to fix it
    task = load_report(pytester)["tasks"][0]
    assert task["verdict"] == "error", task
    broken = task["repetitions"][1]
    assert broken["infrastructure"].startswith("cassette unreadable or unwritable"), broken
    assert f"interactions[0].{field}" in broken["infrastructure"]


def test_every_committed_cassette_passes_the_checks() -> None:
    """The example suite's recordings, and a recording of every SDK path the tests make, load as they did."""
    from vcr.serializers import yamlserializer

    from pytest_consistency.cassette.persist import Persister
    from pytest_consistency.cassette.scrub import Scrubber

    files = sorted(Path(__file__).resolve().parents[3].joinpath("cassettes").rglob("rep-*.yaml"))
    assert files
    for path in files:
        Persister(Scrubber(None), "re-record").load_cassette(path, yamlserializer)
