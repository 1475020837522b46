"""The live status line's text: which fields give way first on a short line, and how it says dollars."""

from __future__ import annotations

from pytest_consistency.plugin.status import GAP, StatusLine, duration


def line(**fields: str) -> StatusLine:
    status = StatusLine(state=None, reporter=None)  # type: ignore[arg-type]
    status.fields = dict(fields)
    return status


FULL = line(
    task="task 3/12",
    repetition="repetition 2/5",
    calls="14 calls",
    tokens="5,210 tokens",
    dollars="$0.0312",
    elapsed="1m 02s",
    left="about 2m 30s left",
)


def test_the_fields_give_way_tokens_first_then_calls_dollars_elapsed_and_time_left() -> None:
    shorter = [
        "task 3/12, repetition 2/5, 14 calls, 5,210 tokens, $0.0312, 1m 02s, about 2m 30s left",
        "task 3/12, repetition 2/5, 14 calls, $0.0312, 1m 02s, about 2m 30s left",
        "task 3/12, repetition 2/5, $0.0312, 1m 02s, about 2m 30s left",
        "task 3/12, repetition 2/5, 1m 02s, about 2m 30s left",
        "task 3/12, repetition 2/5, about 2m 30s left",
        "task 3/12, repetition 2/5",
    ]
    for text, shorter_one in zip(shorter, [*shorter[1:], ""], strict=True):
        assert FULL.fitted(len(GAP) + len(text)) == text
        assert FULL.fitted(len(GAP) + len(text) - 1) == shorter_one


def counted(status: StatusLine, *repetitions: tuple[int, float, int]) -> StatusLine:
    """Each repetition as (tokens, dollars, calls with no price)."""
    for index, (tokens, usd, unpriced) in enumerate(repetitions):
        status.counted[f"r{index}"] = (1, tokens)
        status.dollars[f"r{index}"] = (usd, unpriced)
    return status


def test_dollars_are_said_once_something_was_priced_and_at_least_while_a_call_has_no_price() -> None:
    assert counted(line()).dollars_text() is None  # nothing ran
    assert counted(line(), (0, 0.0, 0)).dollars_text() is None  # no token used, nothing added: nothing to price
    assert counted(line(), (120, 0.0, 1)).dollars_text() is None  # only unpriced calls: unknown, never $0
    assert counted(line(), (120, 0.0, 0)).dollars_text() == "$0.00"  # priced, at a price of zero
    assert counted(line(), (0, 0.25, 0)).dollars_text() == "$0.25"  # a test's own cost (consistency.cost)
    assert counted(line(), (120, 0.1, 0), (80, 0.2, 0)).dollars_text() == "$0.30"  # summed exactly (fsum)
    assert counted(line(), (120, 0.0312, 0), (80, 0.0, 2)).dollars_text() == "at least $0.0312"


def test_durations() -> None:
    assert [duration(s) for s in (0, 59.9, 62, 3599, 3780)] == ["0s", "59s", "1m 02s", "59m 59s", "1h 03m"]
