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

**The fold** (:func:`fold`): before the session summary is built, a rejudge or votes session's items (n x M per task)
become the task's n repetitions, each keeping its judge samples (``RepetitionResult.samples``): a rejudge session's
repetition is its judge sample 1 (the observed outcome), a votes session's (``--consistency-judge-votes=M``) the
majority of its samples read in order by the **stop rule** (:func:`majority`): sample j counts only while samples
1..j-1 leave the majority undecided, the rule the session asked them by, so samples replayed past the decision never
change it. In a votes session the judge's flip rate and kappa read each repetition's first two samples only (the
samples past them are asked only when the first disagree, so their disagreement is not the judge's).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

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
    if rep.outcome == "error":  # its setup or teardown raised (a sample that could not be asked): not the judge's
        return f"error: {rep.message}" if rep.message else "error"
    return None


def vote_of(rep: RepetitionResult | None) -> bool | None:
    """A judge sample's vote for the stop rule: pass or fail as the session's board read it (an error is a failing
    vote, and makes its repetition an error: :func:`fold`); None for a sample that gave none (skipped, not run)."""
    if rep is None or not rep.scored:
        return None
    return rep.succeeded


def majority(votes: Iterable[bool | None], samples: int) -> tuple[bool | None, int]:
    """The stop rule of a majority of ``samples`` (odd) judge samples: the votes read in order (None: no vote), and
    the outcome once ``samples // 2 + 1`` agree; returns (the outcome, None while undecided; how many votes were read
    until it was decided, or all of them)."""
    need = samples // 2 + 1
    yes = no = read = 0
    for read, vote in enumerate(votes, 1):
        yes += vote is True
        no += vote is False
        if yes >= need or no >= need:
            return yes >= need, read
    return None, read


def split_index(index: int, samples: int) -> tuple[int, int]:
    """(repetition r, judge sample j) of item ``index`` (``rejudge.plan.split``, repeated: analysis does not import
    the session wings)."""
    return (index - 1) // samples + 1, (index - 1) % samples + 1


def fold(repetitions: Iterable[RepetitionResult], samples: int, votes: bool) -> list[RepetitionResult]:
    """A rejudge or votes session's items folded into each task's n repetitions (see the module docstring): each
    keeps its sample records in ``samples`` and the judge calls of every sample that ran, so the session's calls and
    cost still count every judge call (the agent's replayed calls once)."""
    grouped: dict[tuple[str, int], dict[int, RepetitionResult]] = {}
    for rep in repetitions:
        r, j = split_index(rep.repeat, samples)
        grouped.setdefault((rep.task_id, r), {})[j] = rep
    folded = []
    for (_, r), by_sample in grouped.items():
        records = [by_sample[j] for j in sorted(by_sample)]
        ran = [rec for rec in records if rec.outcome not in ("not run", "skipped")] or records
        base = by_sample.get(1, ran[0])
        infrastructure = outcome = message = None
        if votes:
            decided, read = majority((vote_of(by_sample.get(j)) for j in range(1, samples + 1)), samples)
            counted = [by_sample[j] for j in range(1, read + 1) if vote_of(by_sample.get(j)) is not None]
            broken = [rec for rec in counted if not_a_verdict(rec) is not None]
            if broken:  # the judge could not give its verdict: the repetition is the setup's failure, as it would be
                base, infrastructure = broken[0], not_a_verdict(broken[0])
            elif decided is not None:
                base = next(rec for rec in counted if rec.succeeded is decided)
            else:
                outcome = "skipped"
                message = (
                    f"no majority of {samples} judge sample(s): {len(counted)} gave a verdict "
                    f"({sum(1 for rec in counted if rec.succeeded)} passed)"
                )
        judged = [call for rec in ran if rec is not base for call in rec.calls if call.role == "judge"]
        folded.append(
            replace(
                base,
                repeat=r,
                n=max(1, base.n // samples),
                order=min(rec.order for rec in records),
                outcome=base.outcome if outcome is None else outcome,
                message=base.message if message is None else message,
                infrastructure=base.infrastructure if infrastructure is None else infrastructure,
                calls=[*base.calls, *judged],
                duration=sum(rec.duration for rec in records),
                samples=records,
            )
        )
    return folded


def sample_records(repetitions: Iterable[RepetitionResult]) -> list[RepetitionResult]:
    """Every judge sample's record: a folded repetition's samples (a report written before the fold: the record)."""
    return [sample for rep in repetitions for sample in (rep.samples or [rep])]


def output_of(rep: RepetitionResult) -> str:
    """What the agent did in a sample, comparable across repetitions: every call that is not the judge's (its
    request as sent, canonicalised, and the decision it got) and the recorded answer (normalised when a hook did)."""
    calls = [(c.role, c.method, c.url, repr(c.sent), repr(c.decision)) for c in rep.calls if c.role != "judge"]
    answer = rep.normalized if rep.normalized is not None else rep.answer
    return repr((calls, rep.answer_recorded, answer))


def first_pair(verdicts: str) -> bool | None:
    """Whether a repetition's first two judge verdicts (in the order drawn: ``PFP``) disagree; None with fewer."""
    drawn = verdicts.replace("-", "").replace(".", "")
    return None if len(drawn) < 2 else drawn[0] != drawn[1]


def seed_of(task_id: str) -> int:
    """The bootstrap's seed: the task id's CRC-32, the same in every process (serial, xdist, merge)."""
    return zlib.crc32(task_id.encode("utf-8"))


def first_two(row: JudgedRepetition) -> tuple[int, int]:
    """A repetition's first two judge verdicts as a subject (passes, samples): what a votes session's agreement
    reads."""
    drawn = row.verdicts.replace("-", "").replace(".", "")[:2]
    return drawn.count("P"), len(drawn)


def figures(
    rows: list[JudgedRepetition],
    counts: list[tuple[TaskCounts, TaskCounts]],
    seed: int,
    confidence: float,
    votes: bool = False,
) -> JudgeFigures:
    """The figures of ``rows`` (the repetitions) and ``counts`` ((majority, observed) per task: one for a task).
    ``votes``: the agreement reads each repetition's first two samples (see the module docstring)."""
    subjects = [first_two(row) if votes else (row.passed, row.samples) for row in rows]
    result = JudgeFigures(repetitions=sum(1 for row in rows if row.samples))
    if votes:
        result.votes_asked = sum(row.samples for row in rows)
        result.majority_changed = sum(
            1 for row in rows if row.observed is not None and row.majority is not None and row.observed != row.majority
        )
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


def task_counts(judged: list[JudgedRepetition], k: int) -> list[tuple[TaskCounts, TaskCounts]]:
    """A task's (majority, observed) counts over its judged repetitions, at k (capped at their number); none when
    no repetition was judged."""
    if not judged:
        return []
    n = len(judged)
    majority_passes = sum(1 for row in judged if row.majority)
    observed_passes = sum(1 for row in judged if row.observed)
    return [(TaskCounts(majority_passes, n, min(k, n)), TaskCounts(observed_passes, n, min(k, n)))]


def suite_figures(
    every: list[JudgedRepetition], pairs: list[tuple[TaskCounts, TaskCounts]], confidence: float, votes: bool = False
) -> JudgeFigures:
    """The suite's figures, with the judge's part's paired interval (majority as the baseline, observed as the run)."""
    suite = figures(every, pairs, seed_of("suite"), confidence, votes=votes)
    if pairs:
        from pytest_consistency.stats.gap_change import paired_gap_difference

        suite.judge_gap_interval = paired_gap_difference(pairs, confidence)
    return suite


def judge_summary(
    repetitions: Iterable[RepetitionResult],
    samples: int,
    confidence: float = 0.95,
    votes: bool = False,
    held: Callable[[RepetitionResult], str] = output_of,
    verdict: Callable[[RepetitionResult], str | None] = not_a_verdict,
    sampled: str = "judge",
) -> JudgeSummary:
    """The figures of ``samples`` samples of the ``sampled`` role per recorded repetition, from a session's
    repetitions (folded or not: :func:`sample_records`); of a votes session (``votes``) by :func:`vote_summary`.
    ``held``: what a sample holds fixed, comparable across repetitions (those with the same are pooled for the
    majority; the agent's output here); ``verdict``: why a sample is not a verdict. ``analysis.user`` passes the
    simulated user's script and the agent (``--consistency-rejudge-role=agent``)."""
    if votes:
        return vote_summary(sample_records(repetitions), samples, confidence)
    by_task: dict[str, list[RepetitionResult]] = {}
    for rep in sample_records(repetitions):
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
            r, j = split_index(rep.repeat, samples)
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
        for r in sorted({split_index(rep.repeat, samples)[0] for rep in reps}):
            got = verdicts.get(r, {})
            passed = sum(got.values())
            observed = got.get(1, got[min(got)] if got else None) if got else None
            majority = None
            if got:
                yes, scored = pooled[outputs[r]]
                majority = observed if 2 * yes == scored else 2 * yes > scored
            shown = "".join("-" if j not in got else "P" if got[j] else "F" for j in range(1, samples + 1))
            rows.append(JudgedRepetition(r, len(got), passed, observed, majority, shown))
        counts = task_counts([row for row in rows if row.observed is not None], k)
        pairs += counts
        tasks.append(TaskJudge(task_id, samples, figures(rows, counts, seed_of(task_id), confidence), rows, excluded))
        every += rows
    return JudgeSummary(samples, tasks, suite_figures(every, pairs, confidence))


def vote_summary(records: Sequence[RepetitionResult], samples: int, confidence: float) -> JudgeSummary:
    """A votes session's judge figures: per repetition the samples the stop rule counted (the rest shown ``.``),
    its majority against its sample 1; the flip rate and kappa of the first two samples; the gap split with the
    majority outcomes as the agent's part (what the headline figures read)."""
    by_task: dict[str, dict[int, dict[int, RepetitionResult]]] = {}
    for rep in records:
        r, j = split_index(rep.repeat, samples)
        by_task.setdefault(rep.task_id, {}).setdefault(r, {})[j] = rep
    tasks: list[TaskJudge] = []
    every: list[JudgedRepetition] = []
    pairs: list[tuple[TaskCounts, TaskCounts]] = []
    for task_id in sorted(by_task, key=lambda t: (min(s.order for g in by_task[t].values() for s in g.values()), t)):
        rows = []
        excluded: list[str] = []
        k = next(iter(next(iter(by_task[task_id].values())).values())).k
        for r in sorted(by_task[task_id]):
            got = by_task[task_id][r]
            decided, read = majority((vote_of(got.get(j)) for j in range(1, samples + 1)), samples)
            shown = ""
            verdicts: list[bool] = []
            for j in range(1, samples + 1):
                rec = got.get(j)
                if j > read or vote_of(rec) is None:
                    shown += "."
                    continue
                why = not_a_verdict(rec) if rec is not None else None
                if why is not None:
                    excluded.append(f"rep{r}@judge{j}: {why}")
                    shown += "-"
                    continue
                shown += "P" if vote_of(rec) else "F"
                verdicts.append(bool(vote_of(rec)))
            first = shown[0] if shown else "."
            observed = None if first not in "PF" else first == "P"
            majority_outcome = decided if decided is not None and "-" not in shown else None
            rows.append(JudgedRepetition(r, len(verdicts), sum(verdicts), observed, majority_outcome, shown))
        counts = task_counts([row for row in rows if row.observed is not None and row.majority is not None], k)
        pairs += counts
        found = figures(rows, counts, seed_of(task_id), confidence, votes=True)
        tasks.append(TaskJudge(task_id, samples, found, rows, excluded))
        every += rows
    return JudgeSummary(samples, tasks, suite_figures(every, pairs, confidence, votes=True), votes=True)
