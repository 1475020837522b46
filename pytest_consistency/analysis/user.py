"""A simulated user's part of a task's gap (``--consistency-rejudge=M --consistency-rejudge-role=agent``), pure
functions of the typed records.

Item i of a task is agent sample j of recorded repetition r (i = (r - 1) M + j): the simulated user's turns of r
replay in order (its *script*), the agent (and its judge) are asked again. The construction is the judge's
(:mod:`.judge`, whose :func:`~.judge.judge_summary` it calls with the held and the sampled roles swapped):

- a repetition's **observed** outcome is its agent sample 1's: one draw of the agent on the recorded user;
- its **majority** outcome is the majority of the agent samples of every repetition whose script is its own, so
  that repetitions whose user said the same get one outcome whatever the agent drew (a tie: each its observed);
- the **user's part** is the gap of the majority outcomes (what remains once the agent's noise on each script is
  voted away: the user's scripts differ), the **agent's part** the observed gap minus it; the agent's **flip rate**
  on a held script (the chance that two agent samples on one script disagree) and Fleiss' kappa between agent
  samples, each with the interval of :mod:`..stats.agreement`.

A repetition's script is read from its samples' records: the simulated user's calls each sample played, in order
(the decision each got: the recorded user's words). Every sample of r plays a prefix of the same recorded turns
(the agent may stop earlier), so the longest is the script as far as any sample reached it; repetitions are pooled
when those are equal. Turns no sample reached never reached the agent, so they decide nothing here. Read from the
records, the script is the same in a serial session, under xdist and in a merge of shards.

A sample that did not run to a verdict (a user call beyond the recorded ones: the agent took more turns than the
recording; an agent call of a committed sample that does not replay; an infrastructure error) is excluded and
said, never counted as the agent's verdict.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_consistency.analysis.judge import judge_summary, sample_records, split_index
from pytest_consistency.model.judge import JudgeFigures
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.model.user import TaskUserSplit, UserFigures, UserSplitSummary

#: The simulated user's role (``consistency.role("user")``), and the role an agent sample asks again.
USER = "user"
AGENT = "agent"


def turns_of(rep: RepetitionResult) -> list[str]:
    """The simulated user's turns a sample played, in order: the decision each user call got (its words)."""
    return [repr(call.decision) for call in rep.calls if call.role == USER and call.error is None]


def scripts(repetitions: Iterable[RepetitionResult], samples: int) -> dict[tuple[str, int], str]:
    """Each recorded repetition's script, per (task, r): the longest run of user turns its samples played."""
    found: dict[tuple[str, int], list[str]] = {}
    for rep in repetitions:
        key = (rep.task_id, split_index(rep.repeat, samples)[0])
        turns = turns_of(rep)
        if key not in found or len(turns) > len(found[key]):
            found[key] = turns
    return {key: repr(turns) for key, turns in found.items()}


def not_an_agent_verdict(rep: RepetitionResult) -> str | None:
    """Why an agent sample is not the agent's verdict (None when it is)."""
    for call in rep.calls:
        if call.error != "replay_mismatch":
            continue
        if call.role == USER:
            return "the simulated user's recorded turns ran out (the agent took more turns than the recording)"
        return f"its {call.role}'s calls did not replay"
    if rep.infrastructure:
        return rep.infrastructure
    if not rep.scored:
        return rep.outcome
    return None


def user_figures(f: JudgeFigures) -> UserFigures:
    """The judge's construction's figures with the roles named: its majority gap is the user's part, observed minus
    majority the agent's, and its flip rate and kappa the agent's."""
    return UserFigures(
        repetitions=f.repetitions,
        flip_rate=f.flip_rate,
        flip_interval=f.flip_interval,
        flip_method=f.flip_method,
        kappa=f.kappa,
        kappa_interval=f.kappa_interval,
        observed_gap_pp=f.observed_gap_pp,
        user_gap_pp=f.majority_gap_pp,
        agent_gap_pp=f.judge_gap_pp,
        agent_gap_interval=f.judge_gap_interval,
    )


def user_split(repetitions: Iterable[RepetitionResult], samples: int, confidence: float = 0.95) -> UserSplitSummary:
    """Per task and for the suite: the agent's flip rate and kappa on held user scripts, and the gap split."""
    records = sample_records(repetitions)  # a session's items folded into n repetitions: each keeps its samples
    script = scripts(records, samples)
    found = judge_summary(
        records,
        samples,
        confidence,
        held=lambda rep: script[(rep.task_id, split_index(rep.repeat, samples)[0])],
        verdict=not_an_agent_verdict,
        sampled=AGENT,
    )
    tasks = [
        TaskUserSplit(task.task_id, task.samples, user_figures(task.figures), task.repetitions, task.excluded)
        for task in found.tasks
    ]
    return UserSplitSummary(found.samples, tasks, user_figures(found.suite))
