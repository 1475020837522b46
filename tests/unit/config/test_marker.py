from __future__ import annotations

import pytest

from pytest_consistency.config.marker import MarkerError, MarkerSpec, parse_marker, task_id_of


def test_defaults_and_positional() -> None:
    assert parse_marker((), {}) == MarkerSpec(5, 5, 1.0)
    assert parse_marker((3,), {"k": 2}) == MarkerSpec(3, 2, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "n=0 must be at least 1"),
        ({"n": -2}, "n=-2 must be at least 1"),
        ({"n": "5"}, "n='5' is not a whole number"),
        ({"n": 2.5}, "n=2.5 is not a whole number"),
        ({"n": True}, "n=True is not a whole number"),
        ({"n": 3, "k": 4}, "k=4 is larger than n=3"),
        ({"k": 0}, "k=0 must be at least 1"),
        ({"min_pass": 1.5}, "min_pass=1.5 must be within [0, 1]"),
        ({"min_pass": -0.1}, "min_pass=-0.1 must be within [0, 1]"),
        ({"min_pass": "high"}, "min_pass='high' is not a number"),
        ({"m": 3}, "unknown argument 'm'"),
    ],
)
def test_invalid_arguments_name_the_argument(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(MarkerError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_marker((), kwargs)


def test_override_replaces_n_and_lowers_k() -> None:
    assert parse_marker((), {"n": 5, "k": 3}, repeat_override=2) == MarkerSpec(2, 2, 1.0)
    assert parse_marker((), {"n": 5}, repeat_override=8) == MarkerSpec(8, 8, 1.0)
    assert parse_marker((), {}, default_min_pass=0.6).min_pass == 0.6
    assert parse_marker((), {"min_pass": 1.0}, default_min_pass=0.6).min_pass == 1.0


def test_task_id_strips_only_the_repetition() -> None:
    assert task_id_of("t.py::f[rep2]", 2) == "t.py::f"
    assert task_id_of("t.py::f[a-rep12]", 12) == "t.py::f[a]"
    assert task_id_of("t.py::C::f[x-rep1-y-rep1]", 1) == "t.py::C::f[x-rep1-y]"


def test_a_min_rate_n_that_can_neither_pass_nor_fail_says_every_verdict_is_undecided() -> None:
    from pytest_consistency.config.marker import parse_marker, rate_warning

    text = rate_warning(parse_marker((), {"n": 1, "min_rate": 0.8}), 0.95)
    assert text is not None and "cannot show a rate of at least 0.8" in text and "cannot show a rate below 0.8" in text
    assert text.endswith("Every verdict will be undecided")
    assert rate_warning(parse_marker((), {"n": 20, "min_rate": 0.8}), 0.95) is None
    only_fail = rate_warning(parse_marker((), {"n": 5, "min_rate": 0.8}), 0.95)
    assert only_fail is not None and only_fail.endswith("It can only FAIL or stay undecided")


def test_score_min_is_a_score_bar_in_the_unit_interval() -> None:
    spec = parse_marker((), {"n": 4, "score_min": 0.7})
    assert spec.score_min == 0.7 and spec.min_pass == 1.0
    assert parse_marker((), {"n": 4}).score_min is None
    assert spec.replaced(n=2).score_min == 0.7 and spec != parse_marker((), {"n": 4})
    for bad in (1.5, -0.1, "high", True):
        with pytest.raises(MarkerError, match=r"score_min=.* must be a number in \[0, 1\]"):
            parse_marker((), {"score_min": bad})
