"""The ``repeat_consistency`` marker: its arguments, their validation, and the ids of repetitions.

A repetition's id part is ``rep<i>``, never ``<i>-<n>``: the id of repetition 3 stays ``rep3`` when n changes,
so selections, history and cassettes keyed on it survive.
"""

from __future__ import annotations

import math
import reprlib
from numbers import Real
from typing import Any

MARKER = "repeat_consistency"
#: Most repetitions of one task (n, k and ``--consistency-repeat``). Each repetition is a test item, so a
#: mistyped ``n=10**6`` would spend minutes collecting; a larger study is several tasks or several sessions.
MAX_REPETITIONS = 1000
MARKER_DOC = (
    f"{MARKER}(n=5, k=None, min_pass=1.0, min_rate=None, score_min=None): run the test n times (at most "
    f"{MAX_REPETITIONS}) as independent repetitions of one task and score its consistency at k (default k = n); the "
    "task passes when its observed pass rate reaches min_pass, or, with min_rate, when its repetitions show a rate "
    "of at least min_rate (pass, fail or undecided, on exact one-sided tests). With score_min, a repetition passes "
    "only when its consistency.score(x) reaches score_min."
)
PARAM = "_consistency_repetition"
ID_PREFIX = "rep"


class _ShortRepr(reprlib.Repr):
    """``repr`` for error messages: long strings and containers are shortened, huge integers are described."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 256:  # repr() of an int over 4300 digits raises ValueError, and a long one helps no one
            return f"<integer of about {int(x.bit_length() * math.log10(2)) + 1} digits>"
        return super().repr_int(x, level)


_SHORT_REPR = _ShortRepr()
_SHORT_REPR.maxstring = 60
_SHORT_REPR.maxother = 60


def shown(value: Any) -> str:
    """A short ``repr`` of a value a user gave, safe for any value (error messages quote it)."""
    try:
        return _SHORT_REPR.repr(value)
    except Exception:  # a message must not fail on the value it describes
        return f"<{type(value).__name__}>"


class MarkerError(ValueError):
    """A marker argument is invalid; the message names the argument and how to fix it."""


class MarkerSpec:
    """A ``repeat_consistency`` marker, parsed: repetitions ``n``, ``k`` for the figures, and the task's bar:
    ``min_pass`` (a rule on the observed count) or ``min_rate`` (a verdict on exact tests; None when not set).

    A value (compared and hashed by its fields, read-only by convention), written out rather than made by
    ``dataclasses`` or ``typing.NamedTuple``: every pytest start reads this module (the option table's limits, the
    marker's line of ``--markers``), and each of those compiles code for the class it makes (``config/options.py``)."""

    __slots__ = ("k", "min_pass", "min_rate", "n", "score_min")

    def __init__(
        self, n: int, k: int, min_pass: float, min_rate: float | None = None, score_min: float | None = None
    ) -> None:
        self.n = n
        self.k = k
        self.min_pass = min_pass
        self.min_rate = min_rate
        #: The score (``consistency.score``) at or above which a repetition passes; None: its assertions decide.
        self.score_min = score_min

    def _fields(self) -> tuple[int, int, float, float | None, float | None]:
        return (self.n, self.k, self.min_pass, self.min_rate, self.score_min)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MarkerSpec) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown_score = "" if self.score_min is None else f", score_min={self.score_min}"
        return f"MarkerSpec(n={self.n}, k={self.k}, min_pass={self.min_pass}, min_rate={self.min_rate}{shown_score})"

    def replaced(self, **changes: Any) -> MarkerSpec:
        """A copy with ``changes`` (as ``dataclasses.replace`` would make)."""
        fields = {
            "n": self.n,
            "k": self.k,
            "min_pass": self.min_pass,
            "min_rate": self.min_rate,
            "score_min": self.score_min,
        }
        return MarkerSpec(**(fields | changes))


def above_maximum(value: Any) -> str:
    """The message for a repetition count above :data:`MAX_REPETITIONS` (shared with ``--consistency-repeat``)."""
    return (
        f"{shown(value)} is above the maximum of {MAX_REPETITIONS} repetitions per task; each repetition is a "
        "test item, so split a larger study into several tasks or sessions"
    )


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MarkerError(f"{name}={shown(value)} is not a whole number; use e.g. {name}=5")
    if value < 1:
        raise MarkerError(f"{name}={shown(value)} must be at least 1")
    if value > MAX_REPETITIONS:
        raise MarkerError(f"{name}={above_maximum(value)}")
    return value


def _fraction(name: str, value: Any) -> float:
    try:
        number = None if isinstance(value, bool) or not isinstance(value, Real) else float(value)
    except (OverflowError, ValueError):  # an int too large for a float
        number = None
    if number is None or not math.isfinite(number):
        raise MarkerError(f"{name}={shown(value)} is not a number; use a fraction such as {name}=0.8")
    if not 0.0 <= number <= 1.0:
        raise MarkerError(f"{name}={shown(value)} must be within [0, 1] (a pass rate, e.g. 0.8 for 4 of 5)")
    return number


def _score(name: str, value: Any) -> float:
    """A score bar: a number in [0, 1], as ``consistency.score`` takes (not a pass rate: said so)."""
    try:
        return _fraction(name, value)
    except MarkerError:
        raise MarkerError(
            f"{name}={shown(value)} must be a number in [0, 1], the score (consistency.score) a repetition must "
            "reach to pass, e.g. score_min=0.7"
        ) from None


def _rate(name: str, value: Any) -> float:
    number = _fraction(name, value)
    if not 0.0 < number < 1.0:
        raise MarkerError(
            f"{name}={shown(value)} must be strictly between 0 and 1: no number of repetitions shows a rate of 1 "
            "(use min_pass=1.0 for 'every repetition passes'), and a rate of at least 0 needs no evidence"
        )
    return number


def parse_marker(
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    repeat_override: int | None = None,
    default_min_pass: float = 1.0,
    default_min_rate: float | None = None,
) -> MarkerSpec:
    """Validate ``repeat_consistency(...)`` arguments.

    ``--consistency-repeat`` replaces n; a marker's k larger than the new n is lowered to n, since pass^k is
    undefined for k > n and a quick ``--consistency-repeat=1`` smoke run should not need every marker edited.
    A marker's own ``min_pass`` or ``min_rate`` wins over the session's defaults (``--consistency-min-pass``,
    ``--consistency-min-rate``); one marker cannot set both.
    """
    known = ("n", "k", "min_pass", "min_rate", "score_min")
    if len(args) > 3:
        raise MarkerError(f"takes at most 3 positional arguments (n, k, min_pass), got {len(args)}")
    values: dict[str, Any] = dict(zip(known, args, strict=False))
    for name, value in kwargs.items():
        if name not in known:
            raise MarkerError(f"unknown argument {name!r}; the arguments are n, k, min_pass, min_rate and score_min")
        if name in values:
            raise MarkerError(f"argument {name!r} given twice")
        values[name] = value
    n = _positive_int("n", values.get("n", 5))
    raw_k = values.get("k")
    k = n if raw_k is None else _positive_int("k", raw_k)
    if k > n:
        raise MarkerError(f"k={k} is larger than n={n}; k counts repetitions drawn from the n that ran")
    raw_min_pass, raw_min_rate = values.get("min_pass"), values.get("min_rate")
    if raw_min_pass is not None and raw_min_rate is not None:
        raise MarkerError(
            "give min_pass (a rule on the observed count, no error control) or min_rate (pass, fail or undecided on "
            "exact tests), not both"
        )
    min_pass = default_min_pass if raw_min_pass is None else _fraction("min_pass", raw_min_pass)
    min_rate = _rate("min_rate", raw_min_rate) if raw_min_rate is not None else None
    if raw_min_pass is None and raw_min_rate is None:
        min_rate = default_min_rate
    if repeat_override is not None:
        n = _positive_int("--consistency-repeat", repeat_override)
        k = min(k, n) if raw_k is not None else n
    raw_score_min = values.get("score_min")
    score_min = None if raw_score_min is None else _score("score_min", raw_score_min)
    return MarkerSpec(n=n, k=k, min_pass=min_pass, min_rate=min_rate, score_min=score_min)


def rate_warning(spec: MarkerSpec, confidence: float) -> str | None:
    """Why a ``min_rate`` task's n cannot reach a decided PASS (or FAIL) at ``confidence``, and the n that can; None
    when n can reach both. Said once per task, at collection."""
    if spec.min_rate is None:
        return None
    from pytest_consistency.stats.rate import fail_to, n_to_fail, n_to_pass, pass_from, rate_bounds

    alpha = round(1.0 - confidence, 12)
    rate, n, level = spec.min_rate, spec.n, f"{confidence * 100:g} %"
    can_pass = pass_from(n, rate, alpha) is not None
    can_fail = fail_to(n, rate, alpha) is not None
    if can_pass and can_fail:
        return None
    lower, upper = rate_bounds(n, n, alpha).low, rate_bounds(0, n, alpha).high
    show_pass = (
        f"cannot show a rate of at least {rate:g} at {level}: {n}/{n} gives a lower bound of {lower:.2f}; "
        f"n = {n_to_pass(rate, alpha)} can"
    )
    show_fail = (
        f"cannot show a rate below {rate:g} at {level}: 0/{n} gives an upper bound of {upper:.2f}; "
        f"n = {n_to_fail(rate, alpha)} can"
    )
    if not can_pass and not can_fail:
        return f"n = {n} {show_pass}, and it {show_fail}. Every verdict will be undecided"
    if not can_pass:
        return f"n = {n} {show_pass}. It can only FAIL or stay undecided"
    return f"n = {n} {show_fail}. It can only PASS or stay undecided"


def repetition_id(index: int) -> str:
    return f"{ID_PREFIX}{index}"


def task_id_of(nodeid: str, repeat: int) -> str:
    """The node id without the repetition part: ``t.py::f[a-rep2]`` -> ``t.py::f[a]``, ``f[rep2]`` -> ``f``."""
    part = repetition_id(repeat)
    if nodeid.endswith(f"[{part}]"):
        return nodeid[: -len(part) - 2]
    if nodeid.endswith(f"-{part}]"):
        return nodeid[: -len(part) - 2] + "]"
    return rejudged_task_id(nodeid)


#: How a re-judging item's id names its sample (``--consistency-rejudge``): ``rep3@judge2``, or with
#: ``--consistency-rejudge-role=agent`` ``rep3@agent2`` (agent sample 2 on repetition 3's simulated user).
JUDGE_ID = "@judge"
AGENT_ID = "@agent"


def judge_sample_id(repeat: int, sample: int, role: str = "judge") -> str:
    """The id of re-judging item (repetition ``repeat``, sample ``sample`` of ``role``): ``rep3@judge2``."""
    return f"{ID_PREFIX}{repeat}@{role}{sample}"


def rejudged_task_id(nodeid: str) -> str:
    """The node id without a re-judging item's part: ``f[rep3@judge2]`` -> ``f``, ``f[a-rep3@agent2]`` -> ``f[a]``
    (its parameter is the item's index, which the id does not show); any other node id as it is."""
    for part in (JUDGE_ID, AGENT_ID):
        at = nodeid.rfind(part)
        if at < 0 or not nodeid.endswith("]") or not nodeid[at + len(part) : -1].isdigit():
            continue
        start = nodeid.rfind(ID_PREFIX, 0, at)
        if start < 1 or nodeid[start - 1] not in "[-" or not nodeid[start + len(ID_PREFIX) : at].isdigit():
            continue
        return nodeid[: start - 1] + ("" if nodeid[start - 1] == "[" else "]")
    return nodeid


def sequential_rate_warning(spec: MarkerSpec, alpha: float) -> str | None:
    """``--consistency-sequential``: why a ``min_rate`` task's cap (its n) cannot reach a PASS (or a FAIL) by
    evidence at ``alpha``, and the cap that can; None when it can reach both."""
    if spec.min_rate is None:
        return None
    from pytest_consistency.stats.sequential import crossing

    rate, n = spec.min_rate, spec.n
    to_pass = next((t for t in range(1, MAX_REPETITIONS + 1) if crossing(t, 0, rate, alpha) == "pass"), None)
    to_fail = next((t for t in range(1, MAX_REPETITIONS + 1) if crossing(0, t, rate, alpha) == "fail"), None)
    short = [(verdict, least) for verdict, least in (("PASS", to_pass), ("FAIL", to_fail)) if least and least > n]
    if not short:
        return None
    words = {"PASS": "passing", "FAIL": "failing"}
    why = " and ".join(
        f"a {verdict} needs at least {least} repetitions, all {words[verdict]}" for verdict, least in short
    )
    left = "stay undecided" if len(short) == 2 else f"{'FAIL' if short[0][0] == 'PASS' else 'PASS'} or stay undecided"
    return (
        f"the cap n = {n} is too small for a sequential {' or '.join(v for v, _ in short)} at alpha {alpha:g}: "
        f"{why}; it can only {left}, and a cap of {max(least for _, least in short)} can"
    )
