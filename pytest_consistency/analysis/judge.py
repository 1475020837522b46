"""The judge's figures of a rejudge session (``--consistency-rejudge=M``), pure functions of the typed records.

Item i of a task is judge sample j of recorded repetition r (``rejudge.plan.split``; repeated here as arithmetic, since
analysis does not import the session wings). Per repetition: how many of its M samples passed (its outcome as a
probability). Per task and for the suite: the judge's flip rate and Fleiss' kappa (:mod:`..stats.agreement`), and
the gap split:

- the **observed** outcome of a repetition is its judge sample 1's: one draw of the judge on the recorded agent output,
  as the recorded run's verdict was (the recorded run's own report is not read);
- its **majority** outcome is the majority of the scored samples of every repetition whose agent output is its own
  (the agent's calls, each request and decision, and the recorded answer: :func:`output_of`), so that repetitions
  whose agent did the same get the same verdict whatever the judge drew (a tie: each its observed outcome). A
  majority of one repetition's M samples alone would leave the judge's noise in (M = 5 samples of a judge that passes
  an output 70 % of the time disagree on the majority 16 % of the time) and read it as the agent's;
- observed gap and majority gap are the usual gap (Mean@k - pass^k, unbiased, in points) of those outcomes; the
  **agent's part** is the majority gap, the **judge's part** is observed minus majority. For the suite, the means
  over tasks, and the judge's part's interval is the paired gap-change interval of ``stats.gap_change`` (majority as
  the baseline, observed as the current run).

A sample that did not run to a verdict (an infrastructure error, or an agent call that did not replay) is excluded
and said, never counted as the judge's verdict.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable

from pytest_consistency.model.judge import JudgedRepetition, JudgeFigures, JudgeSummary, TaskJudge
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.stats import agreement
from pytest_consistency.stats.metrics import TaskCounts, gap_pp


def not_a_verdict(rep: RepetitionResult) -> str | None:
    """Why a sample is not a judge verdict (None when it is)."""
    for call in rep.calls:
        if call.role != "judge" and call.error == "replay_mismatch":
            return f"its {call.role}'s calls did not replay"
    if rep.infrastructure:
        return rep.infrastructure
    if not rep.scored:
        return rep.outcome
    return None


def output_of(rep: RepetitionResult) -> str:
    """What the agent did in a sample, comparable across repetitions: every call that is not the judge's (its
    request as sent, canonicalised, and the decision it got) and the recorded answer (normalised when a hook did)."""
    calls = [(c.role, c.method, c.url, repr(c.sent), repr(c.decision)) for c in rep.calls if c.role != "judge"]
    answer = rep.normalized if rep.normalized is not None else rep.answer
    return repr((calls, rep.answer_recorded, answer))


def first_pair(verdicts: str) -> bool | None:
    """Whether a repetition's first two judge verdicts (in the order drawn: ``PFP``) disagree; None with fewer."""
    drawn = verdicts.replace("-", "")
    return None if len(drawn) < 2 else drawn[0] != drawn[1]


def seed_of(task_id: str) -> int:
    """The bootstrap's seed: the task id's CRC-32, the same in every process (serial, xdist, merge)."""
    return zlib.crc32(task_id.encode("utf-8"))


def figures(
    rows: list[JudgedRepetition], counts: list[tuple[TaskCounts, TaskCounts]], seed: int, confidence: float
) -> JudgeFigures:
    """The figures of ``rows`` (the repetitions) and ``counts`` ((majority, observed) per task: one for a task)."""
    subjects = [(row.passed, row.samples) for row in rows]
    result = JudgeFigures(repetitions=sum(1 for row in rows if row.samples))
    flips = agreement.flip_rate(subjects, confidence, [first_pair(row.verdicts) for row in rows])
    if flips is not None:
        result.flip_rate, result.flip_interval, result.flip_method = flips
    result.kappa = agreement.fleiss_kappa(subjects)
    bootstrap = agreement.kappa_interval(subjects, seed, confidence)
    result.kappa_interval = None if bootstrap is None else bootstrap[0]
    if counts:
        result.majority_gap_pp = sum(gap_pp(m) for m, _ in counts) / len(counts)
        result.observed_gap_pp = sum(gap_pp(o) for _, o in counts) / len(counts)
        result.judge_gap_pp = result.observed_gap_pp - result.majority_gap_pp
    return result


def judge_summary(
    repetitions: Iterable[RepetitionResult],
    samples: int,
    confidence: float = 0.95,
    held: Callable[[RepetitionResult], str] = output_of,
    verdict: Callable[[RepetitionResult], str | None] = not_a_verdict,
    sampled: str = "judge",
) -> JudgeSummary:
    """The figures of ``samples`` samples of the ``sampled`` role per recorded repetition. ``held``: what a sample
    holds fixed, comparable across repetitions (those with the same are pooled for the majority; the agent's output
    here); ``verdict``: why a sample is not a verdict. ``analysis.user`` passes the simulated user's script and the
    agent (``--consistency-rejudge-role=agent``)."""
    by_task: dict[str, list[RepetitionResult]] = {}
    for rep in repetitions:
        by_task.setdefault(rep.task_id, []).append(rep)
    tasks: list[TaskJudge] = []
    every: list[JudgedRepetition] = []
    pairs: list[tuple[TaskCounts, TaskCounts]] = []
    for task_id in sorted(by_task, key=lambda t: (min(r.order for r in by_task[t]), t)):
        reps = sorted(by_task[task_id], key=lambda r: r.repeat)
        verdicts: dict[int, dict[int, bool]] = {}
        outputs: dict[int, str] = {}
        excluded: list[str] = []
        k = reps[0].k
        for rep in reps:
            r, j = (rep.repeat - 1) // samples + 1, (rep.repeat - 1) % samples + 1
            why = verdict(rep)
            if why is not None:
                excluded.append(f"rep{r}@{sampled}{j}: {why}")
                continue
            verdicts.setdefault(r, {})[j] = rep.succeeded
            outputs.setdefault(r, held(rep))  # every sample replays the same agent output
        pooled: dict[str, list[int]] = {}  # per agent output: samples passed, samples scored
        for r, got in verdicts.items():
            tally = pooled.setdefault(outputs[r], [0, 0])
            tally[0] += sum(got.values())
            tally[1] += len(got)
        rows = []
        for r in sorted({(rep.repeat - 1) // samples + 1 for rep in reps}):
            got = verdicts.get(r, {})
            passed = sum(got.values())
            observed = got.get(1, got[min(got)] if got else None) if got else None
            majority = None
            if got:
                yes, scored = pooled[outputs[r]]
                majority = observed if 2 * yes == scored else 2 * yes > scored
            shown = "".join("-" if j not in got else "P" if got[j] else "F" for j in range(1, samples + 1))
            rows.append(JudgedRepetition(r, len(got), passed, observed, majority, shown))
        judged = [row for row in rows if row.observed is not None]
        counts = []
        if judged:
            n = len(judged)
            kk = min(k, n)
            counts = [
                (
                    TaskCounts(sum(1 for row in judged if row.majority), n, kk),
                    TaskCounts(sum(1 for row in judged if row.observed), n, kk),
                )
            ]
            pairs += counts
        tasks.append(TaskJudge(task_id, samples, figures(rows, counts, seed_of(task_id), confidence), rows, excluded))
        every += rows
    suite = figures(every, pairs, seed_of("suite"), confidence)
    if pairs:
        from pytest_consistency.stats.gap_change import paired_gap_difference

        suite.judge_gap_interval = paired_gap_difference(pairs, confidence)
    return JudgeSummary(samples, tasks, suite)
