"""Every gate, declared once: its name, direction, unit, and how its value and its one-sided bounds are read.

The options table (:mod:`.settings`) derives one option per gate from :data:`GATES`, the terminal and the report
render :class:`~.result.GateResult`, so a new gate is one line here.

What a gate promises (docs/baselines.md, "What a verdict promises"). A gate is a statistical decision unless it reads
a fact (route drift: what the calls did). The statistical gates a session decides form one family: each is decided
at its level divided by the family's size m (Bonferroni), so that an agent on the right side of every threshold (an
unchanged agent against its own baseline) fails some gate with probability at most alpha = 1 - confidence:

- an estimated figure (the gap, pass^k, answer disagreement, a cause's share, the gap increase) is decided on its
  one-sided exact or conservative bounds at 1 - alpha/m each (``--consistency-gate-on=bound``, the default): it
  FAILS only when the bound on the wrong side is past the threshold (evidence of a violation), PASSES when the bound
  on the right side is (evidence of compliance), and is UNDECIDED otherwise; ``--consistency-inconclusive`` says
  whether an undecided gate fails the run (``pass``, the default: a run fails only on evidence; ``fail``: every
  gate must be shown met). ``--consistency-gate-on=point`` compares the estimate with the threshold (no error
  control; the gap increase is a test and is decided on its bound in both modes);
- a test against the baseline (the regression count, McNemar's p, the suite-level test) FAILS when it rejects at
  its level / m and passes otherwise: "no evidence of a regression", since without a margin an unchanged agent can
  never be shown not worse.

A value that cannot be measured fails: no gate passes by accident.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the option table reads the declarations at import; the result model loads at the session end
    from pytest_consistency.model.result import Analysis, Comparison, GateOn, GateResult, GateState, SessionSummary
    from pytest_consistency.stats.interval import Interval
    from pytest_consistency.stats.metrics import TaskCounts

Reader = Callable[["SessionSummary"], "float | None"]
#: The figure's interval at a two-sided ``confidence`` (the gate reads its ends as one-sided bounds at
#: (1 - confidence) / 2 each), or None when it cannot be measured.
BoundsReader = Callable[["SessionSummary", float], "Interval | None"]


class Gate:
    """A gate, declared once: its name, option, direction, unit and how to read its figure from a summary.

    Read-only by convention; a plain class, not a dataclass: the option table builds its options from :data:`GATES`
    at every pytest start (see ``config/options.py``). :meth:`replaced` makes a changed copy."""

    __slots__ = (
        "always_bound",
        "bounds",
        "certain_at_extreme",
        "count",
        "direction",
        "fact",
        "flag",
        "help",
        "metavar",
        "name",
        "probability",
        "scored_at_k",
        "test",
        "unit",
        "value",
    )

    def __init__(
        self,
        name: str,
        flag: str,
        direction: Literal["max", "min"],
        unit: str,
        value: Reader,
        help: str,
        bounds: BoundsReader | None = None,
        metavar: str = "PP",
        count: bool = False,
        scored_at_k: bool = False,
        probability: bool = False,
        test: bool = False,
        fact: bool = False,
        always_bound: bool = False,
        certain_at_extreme: bool = False,
    ) -> None:
        self.name = name
        self.flag = flag
        self.direction = direction
        self.unit = unit
        self.value = value
        self.help = help
        #: An estimated figure: its bounds (decided on them with ``--consistency-gate-on=bound``).
        self.bounds = bounds
        self.metavar = metavar
        #: Whole numbers (a count of tasks) rather than percentages.
        self.count = count
        #: The figure is scored at k: with k = n, more repetitions raise k too, and its interval does not narrow.
        self.scored_at_k = scored_at_k
        #: A p-value (0..1) rather than percentage points.
        self.probability = probability
        #: A test against the baseline (decided at its level / m, pass or fail): the regression count, McNemar's p.
        self.test = test
        #: A fact, not an estimate (route drift): decided on its value, outside the family.
        self.fact = fact
        #: Decided on its bounds whatever ``--consistency-gate-on`` says (the gap increase is a one-sided test).
        self.always_bound = always_bound
        #: The figure leaves its extreme (0 for a max gate, 100 for a min gate) only when its truth does (a flaky
        #: task has 0 < p < 1; answers that differed did; a task that failed once has p < 1): at a threshold on that
        #: extreme, a value off it is certain evidence, whatever the interval's end.
        self.certain_at_extreme = certain_at_extreme

    def __repr__(self) -> str:
        return f"Gate({self.name!r}, {self.flag!r})"

    def replaced(self, **changes: Any) -> Gate:
        """A copy with ``changes`` (as ``dataclasses.replace`` would make)."""
        return Gate(**{name: getattr(self, name) for name in self.__slots__} | changes)

    @property
    def dest(self) -> str:
        return f"{self.name}_{self.direction}"

    @property
    def setting(self) -> str:
        """The name the settings read its threshold by (``settings.gap_max``): :attr:`dest` without the prefix."""
        return setting_of(self.dest)


def setting_of(dest: str) -> str:
    """The settings' name of an option's ``dest``: without the ``consistency_`` prefix (``config.option.PREFIX``)."""
    return dest.removeprefix("consistency_")


def _scaled(interval: Interval | None, factor: float) -> Interval | None:
    from pytest_consistency.stats.interval import Interval

    return None if interval is None else Interval(interval.low * factor, interval.high * factor)


def task_counts(summary: SessionSummary) -> list[TaskCounts]:
    """The scored tasks' counts, as the figures are computed from them."""
    from pytest_consistency.stats.metrics import TaskCounts

    return [TaskCounts(c=t.passes, n=t.scored, k=min(t.k, t.scored)) for t in summary.tasks if t.is_scored]


def _suite_bounds(metric: str, factor: float) -> BoundsReader:
    def read(summary: SessionSummary, confidence: float) -> Interval | None:
        from pytest_consistency.stats.suite import suite_intervals

        counts = task_counts(summary)
        if not counts:
            return None
        intervals = suite_intervals(counts, confidence, summary.analysis.target)
        return None if intervals is None else _scaled(getattr(intervals, metric), factor)

    return read


def _disagreement_bounds(summary: SessionSummary, confidence: float) -> Interval | None:
    """Clopper-Pearson on the tasks whose answers disagree: each task's "its n answers are not all alike" is a
    Bernoulli event of its own probability, so the count is a sum of independent Bernoullis and the binomial
    interval holds for their mean whatever the tasks' probabilities (Hoeffding, 1956)."""
    from pytest_consistency.stats.binomial import clopper_pearson

    compared = [t for t in summary.tasks if t.is_scored and t.answers_disagree is not None]
    if summary.answer_disagreement_pp is None or not compared:
        return None
    return _scaled(clopper_pearson(sum(bool(t.answers_disagree) for t in compared), len(compared), confidence), 100)


def _gap_change_bounds(summary: SessionSummary, confidence: float) -> Interval | None:
    """The gap change's bounds as the comparison computed them at the gate's level (``Comparison.alpha``)."""
    c = summary.comparison
    return None if c is None else c.gap_change_bounds


def _percent(value: float | None) -> float | None:
    return None if value is None else value * 100


def _tested(summary: SessionSummary) -> Comparison | None:
    """The comparison when its tests ran: None without a baseline, without a task in both runs, or when the tests
    that assume binomial counts could not run (curtailed counts): a gate that reads them is then not measurable,
    and says so, rather than "ok" beside the error that the run fails on."""
    c = summary.comparison
    return None if c is None or not c.common_tasks or c.untested is not None else c


def _flips_p(summary: SessionSummary) -> float | None:
    """McNemar's p on pass^n flips; 1 when no task flipped either way (no evidence of a change), None without a
    tested comparison (not measurable)."""
    c = _tested(summary)
    if c is None:
        return None
    return 1.0 if c.flips_p_value is None else c.flips_p_value


GATES: tuple[Gate, ...] = (
    Gate(
        "consistency_gap",
        "--consistency-gap-max",
        "max",
        "pp",
        lambda s: s.consistency_gap_pp,
        "fail the session when the consistency gap (Mean@k - pass^k) exceeds PP percentage points (on the evidence: "
        "its one-sided bound; see --consistency-gate-on)",
        bounds=_suite_bounds("gap_pp", 1.0),
        scored_at_k=True,
        certain_at_extreme=True,
    ),
    Gate(
        "answer_disagreement",
        "--answer-disagreement-max",
        "max",
        "pp",
        lambda s: s.answer_disagreement_pp,
        "fail the session when the share of tasks with disagreeing answers exceeds PP percentage points",
        bounds=_disagreement_bounds,
        certain_at_extreme=True,
    ),
    Gate(
        "pass_hat_k",
        "--pass-hat-k-min",
        "min",
        "%",
        lambda s: _percent(s.pass_hat_k),
        "fail the session when pass^k falls below PCT percent",
        bounds=_suite_bounds("pass_hat_k", 100.0),
        metavar="PCT",
        certain_at_extreme=True,
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
        fact=True,
    ),
    Gate(
        "consistency_regressions",
        "--consistency-regressions-max",
        "max",
        "",
        lambda s: None if (c := _tested(s)) is None else float(c.regressions),
        "with --consistency-baseline: fail the session when more than N tasks regressed significantly "
        "(one-sided exact test per task, Benjamini-Hochberg over tasks)",
        metavar="N",
        count=True,
        test=True,
    ),
    Gate(
        "gap_increase",
        "--gap-increase-max",
        "max",
        "pp",
        lambda s: None if s.comparison is None else s.comparison.gap_change_pp,
        "with --consistency-baseline: fail the session when the consistency gap grew by more than PP percentage "
        "points over the tasks both runs share: a one-sided test on the paired change's bound, never the estimate",
        bounds=_gap_change_bounds,
        scored_at_k=True,
        always_bound=True,
    ),
)


def _judge_flip(summary: SessionSummary) -> float | None:
    """The suite's judge flip rate in points (``--consistency-rejudge``), None outside a rejudge session."""
    return None if summary.judge is None else _percent(summary.judge.suite.flip_rate)


def _judge_flip_bounds(summary: SessionSummary, confidence: float) -> Interval | None:
    """The flip rate's interval over every judged repetition at the gate's level (``stats.agreement.flip_rate``:
    exact with two samples per repetition, else Hoeffding's and the first pairs' exact one intersected)."""
    if summary.judge is None:
        return None
    from pytest_consistency.analysis.judge import first_pair
    from pytest_consistency.stats.agreement import flip_rate

    rows = [row for task in summary.judge.tasks for row in task.repetitions]
    found = flip_rate([(row.passed, row.samples) for row in rows], confidence, [first_pair(r.verdicts) for r in rows])
    return None if found is None else _scaled(found[1], 100)


GATES += (
    Gate(
        "judge_flip",
        "--consistency-judge-flip-max",
        "max",
        "pp",
        _judge_flip,
        "with --consistency-rejudge: fail the session when the judge's flip rate (the chance that two judge samples "
        "on the same agent output disagree) exceeds PP percentage points, on its one-sided bound",
        bounds=_judge_flip_bounds,
        certain_at_extreme=True,
    ),
    Gate(
        "mcnemar_p",
        "--mcnemar-p-min",
        "min",
        "",
        _flips_p,
        "with --consistency-baseline: fail the session when McNemar's exact one-sided p on pass^n flips (tasks that "
        "stopped passing every repetition against those that started) is below P, e.g. 0.05 (P divided by the "
        "number of statistical gates)",
        metavar="P",
        probability=True,
        test=True,
    ),
)
#: ``--consistency-cause-max=CAUSE=PP`` (repeatable): one gate per cause, on the points of the gap attributed to it.
CAUSE_OPTION = "consistency_cause_max"
CAUSE_FLAG = "--consistency-cause-max"
#: The causes, as :data:`~pytest_consistency.model.cause.CAUSES` names them (not imported: the option table is read
#: at start-up; a test checks the two agree).
CAUSE_WORDS = ("route", "input", "environment", "sampling", "outside the model", "judge")


def _cause_gap(cause: str) -> Reader:
    def read(summary: SessionSummary) -> float | None:
        share = summary.causes.get(cause) if summary.causes is not None else None
        return None if share is None else share.gap_pp

    return read


def _cause_bounds(cause: str) -> BoundsReader:
    def read(summary: SessionSummary, confidence: float) -> Interval | None:
        if summary.causes is None:
            return None
        from pytest_consistency.analysis.cause.attribute import share_bounds

        return share_bounds(summary.tasks, cause, confidence, summary.analysis.target)

    return read


CAUSE_GATES: tuple[Gate, ...] = tuple(
    Gate(
        f"cause_{cause.replace(' ', '_')}",
        f"{CAUSE_FLAG}={cause}",
        "max",
        "pp",
        _cause_gap(cause),
        f"fail the session when the consistency gap attributed to {cause} exceeds PP percentage points",
        bounds=_cause_bounds(cause),
        certain_at_extreme=True,
    )
    for cause in CAUSE_WORDS
)
#: Every gate: those with an option of their own, then the cause gates (one option for all of them).
ALL_GATES = GATES + CAUSE_GATES
BY_DEST = {gate.dest: gate for gate in ALL_GATES}


#: How an output names a gate's figure, by gate name: the cause gates' is the gap attributed to the cause.
LABELS = {gate.name: f"gap attributed to {cause}" for cause, gate in zip(CAUSE_WORDS, CAUSE_GATES, strict=True)}
LABELS["judge_flip"] = "judge flip rate"  # --consistency-judge-flip-max
LABELS["suite_regression_margin"] = "suite pass rate drop"  # --consistency-sequential-margin, decided in rounds


#: The gates that read a comparison with a baseline, by name (the suite-level test's among them).
BASELINE_GATES = frozenset({"consistency_regressions", "gap_increase", "mcnemar_p", "suite_regression_p"})


def why_not_measurable(name: str, summary: SessionSummary) -> str | None:
    """Why a gate that reads the comparison has no value, in words (None: it has one, or it reads no comparison)."""
    if name not in BASELINE_GATES:
        return None
    c = summary.comparison
    if c is None:
        return "no baseline to compare with (--consistency-baseline)"
    if c.untested is not None:
        return "cannot be decided: a run with curtailed tasks (--consistency-adaptive) has no binomial counts"
    if not c.common_tasks:
        return "no task was scored in both runs"
    return None


def label_of(name: str) -> str:
    """The figure a gate decides, in words: ``consistency gap``, ``gap attributed to input``."""
    return LABELS.get(name) or name.replace("_", " ")


def thresholds_of(value: Callable[[str], Any]) -> dict[str, float | None]:
    """Every gate's threshold by :attr:`Gate.dest`, from the settings' ``value(name)`` (:attr:`Gate.setting`; None:
    not set)."""
    thresholds: dict[str, float | None] = {gate.dest: value(gate.setting) for gate in GATES}
    limits = dict(value(setting_of(CAUSE_OPTION)) or ())
    for cause, gate in zip(CAUSE_WORDS, CAUSE_GATES, strict=True):
        thresholds[gate.dest] = limits.get(cause)
    return thresholds


#: The switch ``--consistency-suite-regression`` (a setting of the analysis, so a merge decides the same way).
SUITE_REGRESSION_FLAG = "--consistency-suite-regression"


def suite_regression_applies(analysis: Analysis, compared: bool) -> bool:
    """The suite-level test gates the run: on whenever the run is compared with a baseline (the default, None),
    always when switched on (then it fails as not measurable without a comparison), never when switched off."""
    return analysis.suite_regression is True or (analysis.suite_regression is None and compared)


def decided_at_a_level(gate: Gate, analysis: Analysis) -> bool:
    """The gate is a statistical decision at a level (in the family): a test, or an estimate on its bounds."""
    if gate.fact:
        return False
    return gate.test or gate.always_bound or analysis.gate_on == "bound"


def family_size(analysis: Analysis, thresholds: Mapping[str, float | None], compared: bool) -> int:
    """m: the statistical gates the session decides (Bonferroni divides each one's level by it); at least 1."""
    gates = sum(1 for gate in ALL_GATES if thresholds.get(gate.dest) is not None and decided_at_a_level(gate, analysis))
    return max(1, gates + suite_regression_applies(analysis, compared))


def family_level(analysis: Analysis, thresholds: Mapping[str, float | None], compared: bool) -> float:
    """The level each gate at the session's alpha is decided at: alpha / m. A comparison's per-task regressions, its
    suite-level verdict and the gap change's bounds are computed at it, so that they say what the gates decide."""
    return analysis.alpha / family_size(analysis, thresholds, compared)


def pin_k_advice(gate: Gate, summary: SessionSummary, run: str | None) -> str | None:
    """For a figure scored at k = n, what to do instead of "more repetitions", which raise k too: pin k.

    Ten all-pass tasks give pass^k [67.6, 100] % at n = 5, 17 and 320 alike when k follows n; with k pinned at 5 the
    interval narrows like 1/sqrt(n), which is what the planning figure assumes. ``run``: the fresh run planned.
    """
    scored = [t for t in summary.tasks if t.is_scored]
    if not gate.scored_at_k or not scored or any(t.k != t.n for t in scored):
        return None
    ks = sorted({t.k for t in scored})
    pinned = f"repeat_consistency(n=..., k={'/'.join(map(str, ks))})"
    if run is None:
        return f"with k = n, more repetitions raise k too and will not decide it; pin k ({pinned})"
    return (
        f"with k = n, more repetitions raise k too and the interval does not narrow: pin k ({pinned}) and plan {run}, "
        "which would likely decide it"
    )


def plan_advice(run: str | None) -> str:
    """What an undecided verdict says to do: plan a fresh run, never add repetitions to this one and look again."""
    if run is None:
        return "the estimate sits on the threshold: no number of repetitions is likely to decide it"
    return (
        f"{run} would likely decide it (plan it as a new run: adding repetitions to this one and looking again is "
        "optional stopping, whose error rate is no longer the level)"
    )


def fresh_run(
    summary: SessionSummary, value: float, bounds: Interval, threshold: float
) -> tuple[int | None, str | None]:
    """The fresh run that would likely decide an undecided gate: ``(n, "a fresh run at n = 23 per task")`` when the
    tasks share n; with mixed n, ``(None, "a fresh run with every task's n times 4.6")`` (the interval narrows like
    1/sqrt(n) for every task alike); ``(None, None)`` when the estimate sits on the threshold."""
    from pytest_consistency.stats.planning import fresh_run_repetitions

    common = summary.repeat
    if common is not None:
        plan = fresh_run_repetitions(common, value, bounds, threshold)
        return plan, None if plan is None else f"a fresh run at n = {plan} per task"
    reference = 1000  # a scale, not a run: the factor is plan / reference
    plan = fresh_run_repetitions(reference, value, bounds, threshold)
    if plan is None:
        return None, None
    return None, f"a fresh run with every task's n times {plan / reference:.2g}"


def _on_the_bound(gate: Gate, bounds: Interval, threshold: float) -> GateState:
    good, bad = (bounds.high, bounds.low) if gate.direction == "max" else (bounds.low, bounds.high)
    if (bad > threshold) if gate.direction == "max" else (bad < threshold):
        return "fail"
    if (good <= threshold) if gate.direction == "max" else (good >= threshold):
        return "pass"
    return "undecided"


def decide(gate: Gate, summary: SessionSummary, threshold: float, family: int = 1) -> GateResult:
    """One gate against its threshold: a fact on its value, a test at its level / ``family``, an estimate on its
    one-sided bounds at alpha / ``family`` (or on the point with ``--consistency-gate-on=point``)."""
    from pytest_consistency.model.result import GateResult

    analysis = summary.analysis
    value = gate.value(summary)
    statistical = decided_at_a_level(gate, analysis)
    level = (threshold if gate.probability else analysis.alpha) / family if statistical else None
    bounds = None
    on: GateOn = "point"
    state: GateState
    plan = None
    advice = None
    if value is None:
        state = "fail"
    elif gate.probability:  # McNemar's p: rejects at P / m
        state = "fail" if value < (level or threshold) - 1e-15 else "pass"
    elif gate.bounds is None or level is None:  # a fact, a count of significant tasks, or the point estimate
        ok = round(value, 9) <= threshold if gate.direction == "max" else round(value, 9) >= threshold
        state = "pass" if ok else "fail"
    else:
        on = "bound"
        bounds = gate.bounds(summary, 1.0 - 2.0 * level)
        if bounds is None:
            state = "fail"
        elif gate.certain_at_extreme and (
            (gate.direction == "max" and threshold == 0 and value > 0)
            or (gate.direction == "min" and threshold == 100 and value < 100)
        ):
            state = "fail"  # certain evidence: the truth is off the extreme too
        else:
            state = _on_the_bound(gate, bounds, threshold)
        if state == "undecided" and bounds is not None:
            plan, run = fresh_run(summary, value, bounds, threshold)
            advice = pin_k_advice(gate, summary, run) or plan_advice(run)
    passed = state == "pass" or (state == "undecided" and analysis.inconclusive == "pass")
    return GateResult(
        name=gate.name,
        option=gate.flag,
        threshold=threshold,
        direction=gate.direction,
        unit=gate.unit,
        value=value,
        interval=bounds,
        on=on,
        state=state,
        passed=passed,
        level=level,
        family=family if level is not None else 1,
        plan_n=plan,
        advice=advice,
    )


def suite_regression(summary: SessionSummary, family: int = 1) -> GateResult:
    """The suite-level gate: fails when the exact stratified test of a drop has p <= alpha / m, or cannot be
    measured. Its value is the p-value and its threshold the level; a test, so pass ("no evidence of a drop") or
    fail."""
    from pytest_consistency.model.result import GateResult

    level = summary.analysis.alpha / family
    change = summary.comparison.suite_change if summary.comparison is not None else None
    value = None if change is None else change.p_value
    state: GateState = "fail" if value is None or value <= level + 1e-12 else "pass"
    return GateResult(
        name="suite_regression_p",
        option=SUITE_REGRESSION_FLAG,
        threshold=level,
        direction="min",
        unit="",
        value=value,
        interval=None,
        on="point",
        state=state,
        passed=state == "pass",
        level=level,
        family=family,
    )


def evaluate(
    summary: SessionSummary, thresholds: Mapping[str, float | None], expect_comparison: bool = False
) -> list[GateResult]:
    """Every gate that has a threshold (keyed by :attr:`Gate.dest`), in declaration order; then the suite-level
    regression gate when it applies (``expect_comparison``: a merge of shards that were compared, given no
    baseline, still owes the comparison, and fails as not measurable)."""
    # A comparison whose tests could not run (curtailed counts) owes no suite-level verdict unless it was asked for.
    compared = (summary.comparison is not None and summary.comparison.untested is None) or expect_comparison
    family = family_size(summary.analysis, thresholds, compared)
    results = [decide(gate, summary, t, family) for gate in ALL_GATES if (t := thresholds.get(gate.dest)) is not None]
    if suite_regression_applies(summary.analysis, compared):
        results.append(suite_regression(summary, family))
    return results
