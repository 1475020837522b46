"""Every gate, declared once: its name, direction, unit, and how its value and interval are read.

The options table (:mod:`.settings`) derives one option per gate from :data:`GATES`, the terminal and the report
render :class:`~.result.GateResult`, so a new gate is one line here.

Deciding a gate (pure): on the ``point`` (default) the estimate is compared with the threshold; on the ``bound``
(``--consistency-gate-on=bound``) a gate passes only when its whole interval is on the right side, fails when the
whole interval is on the wrong side, and is ``inconclusive`` otherwise, with about how many more repetitions would
decide it; ``--consistency-inconclusive`` says whether that counts as a pass or a failure. A gate without an
interval (route drift is a fact, not an estimate; regressions are already a significance count) is decided on its
value in both modes. A value that cannot be measured fails: no gate passes by accident.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the option table reads the declarations at import; the result model loads at the session end
    from pytest_consistency.model.result import GateOn, GateResult, GateState, SessionSummary
    from pytest_consistency.stats.interval import Interval

Reader = Callable[["SessionSummary"], "float | None"]
IntervalReader = Callable[["SessionSummary"], "Interval | None"]


@dataclass(frozen=True)
class Gate:
    """A gate, declared once: its name, option, direction, unit and how to read its figure from a summary."""

    name: str
    flag: str
    direction: Literal["max", "min"]
    unit: str
    value: Reader
    help: str
    interval: IntervalReader | None = None
    metavar: str = "PP"
    #: Whole numbers (a count of tasks) rather than percentages.
    count: bool = False
    #: The figure is scored at k: with k = n, more repetitions raise k too, and its interval does not narrow.
    scored_at_k: bool = False
    #: A p-value (0..1) rather than percentage points.
    probability: bool = False

    @property
    def dest(self) -> str:
        return f"{self.name}_{self.direction}"


def _scaled(interval: Interval | None, factor: float) -> Interval | None:
    from pytest_consistency.stats.interval import Interval

    return None if interval is None else Interval(interval.low * factor, interval.high * factor)


def _percent(value: float | None) -> float | None:
    return None if value is None else value * 100


def _flips_p(summary: SessionSummary) -> float | None:
    """McNemar's p on pass^n flips; 1 when no task flipped either way (no evidence of a change), None without a
    comparison (not measurable)."""
    c = summary.comparison
    if c is None or not c.common_tasks:
        return None
    return 1.0 if c.flips_p_value is None else c.flips_p_value


GATES: tuple[Gate, ...] = (
    Gate(
        "consistency_gap",
        "--consistency-gap-max",
        "max",
        "pp",
        lambda s: s.consistency_gap_pp,
        "fail the session when the consistency gap (Mean@k - pass^k) exceeds PP percentage points",
        interval=lambda s: s.intervals.gap_pp if s.intervals else None,
        scored_at_k=True,
    ),
    Gate(
        "answer_disagreement",
        "--answer-disagreement-max",
        "max",
        "pp",
        lambda s: s.answer_disagreement_pp,
        "fail the session when the share of tasks with disagreeing answers exceeds PP percentage points",
    ),
    Gate(
        "pass_hat_k",
        "--pass-hat-k-min",
        "min",
        "%",
        lambda s: _percent(s.pass_hat_k),
        "fail the session when pass^k falls below PCT percent",
        interval=lambda s: _scaled(s.intervals.pass_hat_k, 100) if s.intervals else None,
        metavar="PCT",
        scored_at_k=True,
    ),
    Gate(
        "route_drift",
        "--route-drift-max",
        "max",
        "pp",
        lambda s: s.route.drift_pp if s.route else None,
        "fail the session when the share of tasks whose repetitions did not share one route exceeds PP "
        "percentage points (0 is the usual CI value)",
    ),
    Gate(
        "consistency_regressions",
        "--consistency-regressions-max",
        "max",
        "",
        lambda s: float(s.comparison.regressions) if s.comparison and s.comparison.common_tasks else None,
        "with --consistency-baseline: fail the session when more than N tasks regressed significantly "
        "(one-sided exact test per task, Benjamini-Hochberg over tasks)",
        metavar="N",
        count=True,
    ),
    Gate(
        "gap_increase",
        "--gap-increase-max",
        "max",
        "pp",
        lambda s: None if s.comparison is None else s.comparison.gap_change_pp,
        "with --consistency-baseline: fail the session when the consistency gap grew by more than PP percentage "
        "points over the tasks both runs share (on the paired interval's bound with --consistency-gate-on=bound)",
        interval=lambda s: s.comparison.gap_change_interval if s.comparison else None,
        scored_at_k=True,
    ),
)
GATES += (
    Gate(
        "mcnemar_p",
        "--mcnemar-p-min",
        "min",
        "",
        _flips_p,
        "with --consistency-baseline: fail the session when McNemar's exact one-sided p on pass^n flips (tasks that "
        "stopped passing every repetition against those that started) is below P, e.g. 0.05",
        metavar="P",
        probability=True,
    ),
)
#: ``--consistency-cause-max=CAUSE=PP`` (repeatable): one gate per cause, on the points of the gap attributed to it.
CAUSE_OPTION = "consistency_cause_max"
CAUSE_FLAG = "--consistency-cause-max"
#: The causes, as :data:`~pytest_consistency.model.cause.CAUSES` names them (not imported: the option table is read
#: at start-up; a test checks the two agree).
CAUSE_WORDS = ("route", "input", "environment", "sampling", "outside the model")


def _cause_gap(cause: str) -> Reader:
    def read(summary: SessionSummary) -> float | None:
        share = summary.causes.get(cause) if summary.causes is not None else None
        return None if share is None else share.gap_pp

    return read


CAUSE_GATES: tuple[Gate, ...] = tuple(
    Gate(
        f"cause_{cause.replace(' ', '_')}",
        f"{CAUSE_FLAG}={cause}",
        "max",
        "pp",
        _cause_gap(cause),
        f"fail the session when the consistency gap attributed to {cause} exceeds PP percentage points",
    )
    for cause in CAUSE_WORDS
)
#: Every gate: those with an option of their own, then the cause gates (one option for all of them).
ALL_GATES = GATES + CAUSE_GATES
BY_DEST = {gate.dest: gate for gate in ALL_GATES}


#: How an output names a gate's figure, by gate name: the cause gates' is the gap attributed to the cause.
LABELS = {gate.name: f"gap attributed to {cause}" for cause, gate in zip(CAUSE_WORDS, CAUSE_GATES, strict=True)}


def label_of(name: str) -> str:
    """The figure a gate decides, in words: ``consistency gap``, ``gap attributed to input``."""
    return LABELS.get(name) or name.replace("_", " ")


def thresholds_of(value: Callable[[str], Any]) -> dict[str, float | None]:
    """Every gate's threshold by :attr:`Gate.dest`, from the settings' ``value(dest)`` (None: not set)."""
    thresholds: dict[str, float | None] = {gate.dest: value(gate.dest) for gate in GATES}
    limits = dict(value(CAUSE_OPTION) or ())
    for cause, gate in zip(CAUSE_WORDS, CAUSE_GATES, strict=True):
        thresholds[gate.dest] = limits.get(cause)
    return thresholds


def pin_k_advice(gate: Gate, summary: SessionSummary, more: int | None) -> str | None:
    """For a figure scored at k = n, what to do instead of "more repetitions", which raise k too: pin k.

    Ten all-pass tasks give pass^k [64.0, 100] % at n = 5, 17 and 320 alike when k follows n; with k pinned at 5 the
    interval narrows like 1/sqrt(n), which is what the repetition count assumes.
    """
    k, n = summary.k, summary.repeat
    if not gate.scored_at_k or k is None or n is None or k != n:
        return None
    pinned = f"repeat_consistency(n=..., k={k})"
    if more is None:
        return f"with k = n, more repetitions raise k too and will not decide it; pin k ({pinned})"
    return (
        f"about {more} more repetitions per task would likely decide it once k is pinned at {k} ({pinned}); "
        "with k = n, more repetitions raise k too and the interval does not narrow"
    )


def decide(gate: Gate, summary: SessionSummary, threshold: float) -> GateResult:
    """One gate against its threshold, on the point or on the bound as the summary's analysis says."""
    from pytest_consistency.model.result import GateResult
    from pytest_consistency.stats.planning import repetitions_to_decide

    analysis = summary.analysis
    value = gate.value(summary)
    interval = gate.interval(summary) if gate.interval is not None and analysis.gate_on == "bound" else None
    on: GateOn = "bound" if interval is not None else "point"
    state: GateState
    more = None
    advice = None
    if value is None:
        state = "fail"
    elif interval is None:
        ok = round(value, 9) <= threshold if gate.direction == "max" else round(value, 9) >= threshold
        state = "pass" if ok else "fail"
    else:
        good, bad = (interval.high, interval.low) if gate.direction == "max" else (interval.low, interval.high)
        if (good <= threshold) if gate.direction == "max" else (good >= threshold):
            state = "pass"
        elif (bad > threshold) if gate.direction == "max" else (bad < threshold):
            state = "fail"
        else:
            state = "inconclusive"
            more = repetitions_to_decide(summary.repeat or 1, value, interval, threshold)
            advice = pin_k_advice(gate, summary, more)
    passed = state == "pass" or (state == "inconclusive" and analysis.inconclusive == "pass")
    return GateResult(
        name=gate.name,
        option=gate.flag,
        threshold=threshold,
        direction=gate.direction,
        unit=gate.unit,
        value=value,
        interval=interval,
        on=on,
        state=state,
        passed=passed,
        more_repetitions=more,
        advice=advice,
    )


#: The switch ``--consistency-suite-regression`` (a setting of the analysis, so a merge decides the same way).
SUITE_REGRESSION_FLAG = "--consistency-suite-regression"


def suite_regression(summary: SessionSummary) -> GateResult:
    """The suite-level gate: fails when the exact stratified test of a drop has p <= alpha, or cannot be measured.

    Its value is the p-value and its threshold alpha; it has no interval to be decided on, so it is decided on its
    value in both modes (like the regression count).
    """
    from pytest_consistency.model.result import GateResult

    alpha = summary.analysis.alpha
    change = summary.comparison.suite_change if summary.comparison is not None else None
    value = None if change is None else change.p_value
    state: GateState = "fail" if value is None or value <= alpha + 1e-12 else "pass"
    return GateResult(
        name="suite_regression_p",
        option=SUITE_REGRESSION_FLAG,
        threshold=alpha,
        direction="min",
        unit="",
        value=value,
        interval=None,
        on="point",
        state=state,
        passed=state == "pass",
    )


def evaluate(summary: SessionSummary, thresholds: Mapping[str, float | None]) -> list[GateResult]:
    """Every gate that has a threshold (keyed by :attr:`Gate.dest`), in declaration order; then the suite-level
    regression gate when the analysis switches it on."""
    results = [decide(gate, summary, t) for gate in ALL_GATES if (t := thresholds.get(gate.dest)) is not None]
    if summary.analysis.suite_regression:
        results.append(suite_regression(summary))
    return results
