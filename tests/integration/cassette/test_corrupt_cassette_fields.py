"""A hand-edited cassette whose field has the wrong type is a corrupt cassette, never the agent's failure.

``code: 'OK'`` where the status should be, a header that is not a list of strings, a body that is not text: vcrpy
loads such a file without complaint and fails only when it builds the response, inside the agent's call, where the
error read as the agent's own ``ValueError`` or ``TypeError`` and ``min_pass < 1`` tolerated it. The plugin checks
every field a replay reads when it loads the file: the repetition errors in its setup with a message naming the
file, the field and the fix; the task's verdict is ``error`` and the run fails, whatever ``min_pass`` says.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_openai import FakeOpenAI, Step
from suites import ONE_CALL_AGENT as AGENT
from suites import load_report, run_recorded

Edit = Callable[[dict[str, Any]], None]


def _status(value: Any) -> Edit:
    def edit(interaction: dict[str, Any]) -> None:
        interaction["response"]["status"]["code"] = value

    return edit


def _set(where: str, name: str, value: Any) -> Edit:
    def edit(interaction: dict[str, Any]) -> None:
        interaction[where][name] = value

    return edit


def _header(value: Any) -> Edit:
    def edit(interaction: dict[str, Any]) -> None:
        interaction["response"]["headers"]["content-type"] = value

    return edit


def _message(interaction: dict[str, Any]) -> None:
    interaction["response"]["status"]["message"] = 404


def _no_message(interaction: dict[str, Any]) -> None:
    del interaction["response"]["status"]["message"]


def _body_string(interaction: dict[str, Any]) -> None:
    interaction["response"]["body"]["string"] = {"id": "chatcmpl-1"}


#: (what is broken, the edit, the field the message names)
CASES = {
    "status code OK": (_status("OK"), "response.status.code"),
    "status code '200'": (_status("200"), "response.status.code"),
    "status code true": (_status(True), "response.status.code"),
    "status code 200.0": (_status(200.0), "response.status.code"),
    "status a number": (_set("response", "status", 200), "response.status"),
    "status message a number": (_message, "response.status.message"),
    "status message missing": (_no_message, "response.status.message"),
    "headers a list": (_set("response", "headers", ["content-type: application/json"]), "response.headers"),
    "header value a string": (_header("application/json"), "response.headers.content-type"),
    "header value a number": (_header([200]), "response.headers.content-type"),
    "body a string": (_set("response", "body", "{}"), "response.body"),
    "body string a mapping": (_body_string, "response.body.string"),
    "request body a number": (_set("request", "body", 42), "request.body"),
    "request method a number": (_set("request", "method", 1), "request.method"),
    "request uri a number": (_set("request", "uri", 42), "request.uri"),
    "request headers a list": (_set("request", "headers", ["accept: */*"]), "request.headers"),
}


def _rewrite(path: Path, edit: Edit) -> None:
    text = path.read_text()
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    edit(data["interactions"][0])
    path.write_text(json.dumps(data, indent=4) if path.suffix == ".json" else yaml.safe_dump(data))


@pytest.mark.parametrize("fmt", ["yaml", "json"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_field_of_the_wrong_type_is_an_infrastructure_error_never_tolerated(
    pytester: pytest.Pytester, fake: FakeOpenAI, case: str, fmt: str
) -> None:
    fake.script(*[Step(text="widget")] * 3)
    pytester.makepyfile(test_agent=AGENT)
    form = f"--consistency-cassette-format={fmt}"
    assert run_recorded(pytester, fake.base_url, "once", form).ret == 0
    edit, field = CASES[case]
    target = pytester.path / "cassettes" / "test_agent" / "test_task" / f"rep-2.{fmt}"
    _rewrite(target, edit)
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
