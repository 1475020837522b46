"""A judge that flips on the same agent output is the cause ``judge``, with its share of the gap, in every output,
and ``--consistency-cause-max=judge=PP`` gates on it; the same verdicts read as the agent's calls would be the
agent's ``sampling``."""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI, Step
from suites import consistency_section
from suites import load_report as report
from suites import run_mode as run

SUITE = """
import pytest

@pytest.mark.repeat_consistency(n=4)
def test_summary(pinned_client, CLIENT, consistency):  # the judge's client: judge_client, or the agent's own
    summary = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "summarise the invoice"}]
    ).choices[0].message.content
    verdict = CLIENT.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "grade: " + summary}]
    ).choices[0].message.content
    consistency.record(summary)
    assert verdict == "PASS"
"""


def judge_flips(fake: FakeOpenAI) -> None:
    """The agent's call always answers "the total is 42"; the judge grades it PASS, FAIL, PASS, FAIL."""
    verdicts = iter(["PASS", "FAIL", "PASS", "FAIL"])
    fake.answer = lambda body: (
        Step(text=next(verdicts))
        if body["messages"][0]["content"].startswith("grade:")
        else Step(text="the total is 42")
    )


#: Both clients serially; under xdist the judge's (the calls cross workers in the same payload either way).
@pytest.mark.parametrize(
    ("client", "cause", "workers"),
    [
        pytest.param("judge_client", "judge", [], id="judge_client-judge-serial"),
        pytest.param("judge_client", "judge", ["-n", "2"], id="judge_client-judge-xdist"),
        pytest.param("pinned_client", "sampling", [], id="pinned_client-sampling-serial"),
    ],
)
def test_a_judge_flipping_on_identical_agent_output_is_the_cause_judge(
    pytester: pytest.Pytester, fake: FakeOpenAI, client: str, cause: str, workers: list[str]
) -> None:
    judge_flips(fake)
    suite = SUITE.replace(
        "pinned_client, CLIENT", "pinned_client" if client == "pinned_client" else f"pinned_client, {client}"
    )
    pytester.makepyfile(test_agent=suite.replace("CLIENT", client))
    args = (
        f"--consistency-base-url={fake.base_url}",
        "--consistency-cause-max=judge=0",
        "--consistency-md=s.md",
        *workers,
    )
    result = run(pytester, "once", *args)
    task = report(pytester)["tasks"][0]
    summary = report(pytester)["summary"]
    assert (task["passes"], task["scored"]) == (2, 4)
    assert task["cause"] == cause, task["why"]
    assert summary["causes"][cause]["gap_pp"] == pytest.approx(50.0)
    gate = next(g for g in summary["gates"] if g["option"] == "--consistency-cause-max=judge")
    if cause == "judge":
        assert (
            task["why"]["advice"] == "pin the judge's temperature; ask for a rubric; use a majority of M judge samples"
        )
        assert gate["state"] == "fail" and result.ret == 1
        assert any("judge 50.0 pp" in line for line in consistency_section(result)), consistency_section(result)
        assert "judge" in (pytester.path / "s.md").read_text()
    else:  # the same verdicts from the agent's own client are the agent's sampling at its second step
        assert task["why"]["step"] == 2 and gate["state"] == "pass"
