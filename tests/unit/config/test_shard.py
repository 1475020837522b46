"""config/shard.py: which tasks a shard runs, which shard a session is, and which run it is part of."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_consistency.config.shard import run_id_of, shard_of


def test_the_run_id_given_wins_over_the_ci_s() -> None:
    assert run_id_of("nightly-7", {"GITHUB_RUN_ID": "99"}) == "nightly-7"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"GITHUB_RUN_ID": "12345", "GITHUB_RUN_ATTEMPT": "2"}, "12345-2"),
        ({"GITHUB_RUN_ID": "12345"}, "12345"),
        ({"CI_PIPELINE_ID": "881"}, "881"),
        ({"BUILDKITE_BUILD_ID": "b-1"}, "b-1"),
        ({"CIRCLE_WORKFLOW_ID": "w-9"}, "w-9"),
        ({"BUILD_TAG": "jenkins-job-4"}, "jenkins-job-4"),
        ({"GITHUB_RUN_ID": "1", "CI_PIPELINE_ID": "2"}, "1"),
    ],
)
def test_every_job_of_one_ci_run_gets_the_same_run_id(environ: dict[str, str], expected: str) -> None:
    """Shards are separate jobs: the run id must come from what all of them see, not from the process."""
    assert run_id_of(None, environ) == expected
    assert run_id_of(None, dict(environ)) == run_id_of(None, environ)


def test_outside_ci_each_session_is_a_run_of_its_own() -> None:
    first, second = run_id_of(None, {}), run_id_of(None, {})
    assert first != second and len(first) == 16 and int(first, 16) >= 0


def test_an_empty_ci_variable_is_not_a_run_id() -> None:
    assert run_id_of("", {"GITHUB_RUN_ID": ""}) not in ("", "-")


def test_the_shard_comes_from_the_option_or_pytest_split() -> None:
    assert shard_of((2, 3), SimpleNamespace()) == "2/3"
    assert shard_of(None, SimpleNamespace(splits=4, group=1)) == "1/4"
    assert shard_of(None, SimpleNamespace(splits=1, group=1)) is None
