"""The rejudge session's role object (``--consistency-rejudge=M``), registered as ``consistency-rejudge``.

Why one object: re-judging changes what collection makes of a marked task (n x M items), which cassette each item
runs on and how (:mod:`..rejudge`), what a replay mismatch means, and what the session end adds; all of it is here,
registered only when the mode is on (as pytest-xdist's looponfail registers its own role). The plugin's modules ask
:attr:`~.state.PluginState.mode` (the :class:`~.state.SessionMode` protocol), never whether this mode is on.

What runs: every marked task's recorded repetitions r = 1..n, each judged M times; item (r, j) replays repetition r's
agent (and simulated user) calls from its recording and asks the judge live, recording the answer into its own
cassette (``<task dir>/rejudge/rep-<r>/judge-<j>.yaml``); a sample recorded already replays offline. Unmarked tests,
and marked tasks whose recording holds no judge call, are left out (said in the header).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.capture.active import ActiveRepetition
from pytest_consistency.cassette import paths
from pytest_consistency.config.marker import PARAM, MarkerSpec, judge_sample_id, task_id_of
from pytest_consistency.config.options import LIVE_MODES
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.plugin.state import BOARD_KEY, SCRATCH, PluginState, Stop, is_worker, marker_of
from pytest_consistency.rejudge.cassettes import JUDGE, SampleState, not_judged, role_of, sample_state
from pytest_consistency.rejudge.plan import index_of, sample_cassette, source_cassette, split
from pytest_consistency.resample.prefix import PrefixError, interactions, write_cassette

NAME = "consistency-rejudge"
OPTION = "--consistency-rejudge"
VOTES_NAME = "consistency-judge-votes"
VOTES_OPTION = "--consistency-judge-votes"


class Rejudge:
    """The rejudge mode: its collection, each sample's cassette and guard, its messages and its figures. Sampling the
    agent on the simulated user's recorded turns (``--consistency-rejudge-role=agent``) is this mode with the roles
    swapped: ``plugin.agent_samples`` overrides what it reads through ``role`` and the methods below it."""

    #: The role sampled M times per recorded repetition (the item ids and the samples' cassettes name it).
    role = JUDGE
    #: The tasks left out, said at collection: those whose recording holds no call of this kind.
    left_out = "whose recording holds no judge call (judge_client, consistency.judging())"

    #: The option that turns the mode on, as its messages name it.
    option = OPTION

    def __init__(self, config: pytest.Config, state: PluginState) -> None:
        self.config, self.state = config, state
        self.samples: int = self.samples_asked(state) or 1
        self.record: str = state.settings.record
        self.suffix = paths.SUFFIXES[state.settings.cassette_format]
        #: Per (task, repetition): the source's exchanges a sample replays (its non-judge ones).
        self.replayed: dict[tuple[str, int], list[dict[str, Any]]] = {}
        #: The (task, item index) pairs whose judge sample is asked live in this session, and those selected to run.
        self.live: set[tuple[str, int]] = set()
        self.selected: set[tuple[str, int]] = set()
        #: Marked tasks left out because their recording holds no judge call.
        self.unjudged: list[str] = []
        #: The judge providers the recordings call (for the key check of samples asked live).
        self.providers: set[str] = set()
        if self.record == "off":
            raise pytest.UsageError(
                f"{self.option}={self.samples}: --consistency-record=off keeps no cassettes, so there is no recorded "
                "agent to replay; drop --consistency-record=off"
            )
        state.mode = self

    @staticmethod
    def samples_asked(state: PluginState) -> int | None:
        """The M of the mode's option."""
        return state.settings.rejudge

    def surely_asked(self, sample: int) -> bool:
        """Whether judge sample ``sample`` of a repetition is asked whatever the earlier samples said: every sample of
        a rejudge session (a votes session asks the later ones only while the majority is undecided)."""
        return True

    def shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.config.rootpath))
        except ValueError:
            return str(path)

    # --- the SessionMode protocol ----------------------------------------------------------------------------

    def repetitions(self, nodeid: str, n: int) -> int:
        return n * self.samples

    def repetition_id(self, index: int) -> str:
        return judge_sample_id(*split(index, self.samples), self.role)

    def spec(self, task_id: str, spec: MarkerSpec) -> MarkerSpec:
        return spec.replaced(n=spec.n * self.samples)

    def select(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Nothing yet: this mode selects after ``-k`` and the others (:meth:`pytest_collection_modifyitems`)."""

    def replays_task_folder(self, task_id: str) -> bool:
        return True

    def cassette(self, task_id: str, repeat: int, directory: Path) -> tuple[Path, str, Stop | None]:
        r, j = split(repeat, self.samples)
        path = sample_cassette(directory, r, j, self.suffix, self.role)
        if (task_id, repeat) not in self.live:
            return path, "none", None
        replayed = self.replayed.get((task_id, r))
        if replayed is None:  # never read: the collection refused the session (an xdist worker fails its items)
            return path, "none", ("fail", f"{self.option}: repetition {r} of {task_id} has no readable recording")
        write_cassette(replayed, path)
        return path, "new_episodes", None

    def entered(self, active: ActiveRepetition) -> None:
        if (active.task_id, active.repeat) in self.live and active.vcr_cassette is not None:
            from pytest_consistency.rejudge.guard import hold_to_recording

            hold_to_recording(active.vcr_cassette)

    def mismatch(self, active: ActiveRepetition) -> str | None:
        r, j = split(active.repeat, self.samples)
        counts: dict[str, int] = {}
        for call in active.calls:
            if call.role == JUDGE:
                continue
            counts[call.role] = counts.get(call.role, 0) + 1
            if call.error == "replay_mismatch":
                detail = f" [{call.detail}]" if call.detail else ""
                whose = "the agent's" if call.role == "agent" else f"the {call.role}'s"
                return (
                    f"rejudge {active.task_id} rep{r}@judge{j}: {whose} call {counts[call.role]} is not in rep-{r}'s "
                    f"recording: its input varies between runs (see the cause `input`); rejudging needs an agent "
                    f"whose calls replay. No call was sent in its place.{detail}"
                )
        return None

    def fold(self, repetitions: list[Any]) -> list[Any]:
        """Each recorded repetition's M judge samples as one repetition: its outcome is sample 1's (the observed one),
        so the headline figures count n repetitions, not n x M (``analysis.judge.fold``)."""
        from pytest_consistency.analysis.judge import fold

        return fold(repetitions, self.samples, votes=False)

    def summarise(self, summary: SessionSummary, repetitions: list[Any]) -> None:
        from pytest_consistency.analysis.judge import judge_summary

        summary.judge = judge_summary(repetitions, self.samples, summary.analysis.confidence)

    # --- pytest's hooks ----------------------------------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        mode = "asks missing samples live" if self.record in LIVE_MODES else "replays committed samples only"
        return [
            f"consistency rejudge: {self.samples} judge sample(s) per recorded repetition; the agent's calls replay "
            f"from the recording, only the judge is asked ({mode})"
        ]

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Only marked tasks run; each item's sample is read (complete, missing, stale) and the session refused, before
        any call, when a sample cannot be asked (no recording mode, no key) or no longer matches its source."""
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        tasks: dict[pytest.Item, str] = {}
        numbers: dict[pytest.Item, int] = {}
        problems: list[str] = []
        judged: dict[str, bool] = {}
        for item in items:
            callspec = getattr(item, "callspec", None)
            if marker_of(item) is None or callspec is None or PARAM not in callspec.params:
                dropped.append(item)
                continue
            index = numbers[item] = int(callspec.params[PARAM])
            task = tasks[item] = task_id_of(item.nodeid, index)
            r, j = split(index, self.samples)
            directory = paths.task_directory(self.state.cassette_root, task)
            if task not in judged:
                judged[task] = False
            if (task, r) not in self.replayed:
                source = source_cassette(directory, r, self.suffix)
                try:
                    recorded = interactions(source)
                except FileNotFoundError:
                    problems.append(
                        f"{self.option}: repetition {r} of {task} has no cassette at {self.shown(source)}; record the "
                        f"task first (pytest '{task}' --consistency-record=all), then re-judge it"
                    )
                    recorded = []
                except PrefixError as exc:
                    problems.append(f"{self.option}: {exc}")
                    recorded = []
                judges = self.asked(recorded)
                judged[task] = judged[task] or self.applies(recorded)
                for exchange in judges:
                    request = exchange.get("request") or {}
                    self.providers.add("anthropic" if str(request.get("uri", "")).endswith("/messages") else "openai")
                self.replayed[(task, r)] = self.held(recorded)
            path = sample_cassette(directory, r, j, self.suffix, self.role)
            try:
                found = self.state_of(self.replayed[(task, r)], path)
            except PrefixError as exc:
                problems.append(f"{self.option}: {exc}")
                continue
            if found.state == "stale":
                problems.append(
                    f"{self.option}: {self.role} sample cassette {self.shown(path)} no longer replays repetition {r}'s "
                    f"recording (its call {found.call} differs from "
                    f"{self.shown(source_cassette(directory, r, self.suffix))}): "
                    f"the repetition was re-recorded since. Delete {self.shown(path.parent.parent)} and re-judge "
                    "again (--consistency-record=once)"
                )
            if self.record == "all" or found.state != "complete":
                self.live.add((task, index))
            kept.append(item)
        self.unjudged = [task for task, has in judged.items() if not has and not problems]
        if self.unjudged:
            dropped += [item for item in kept if tasks[item] in self.unjudged]
            kept = [item for item in kept if tasks[item] not in self.unjudged]
            self.live = {(task, i) for task, i in self.live if task not in self.unjudged}
        surely = {(task, i) for task, i in self.live if self.surely_asked(split(i, self.samples)[1])}
        if not problems and surely:
            problems += self.live_problems(len(surely))
        if problems and not is_worker(config):
            raise pytest.UsageError(problems[0])
        if problems:  # an xdist worker cannot stop the session: one item fails with the message
            kept, dropped = kept[:1], dropped + kept[1:]
            for item in kept:
                self.state.track(item).stop = ("fail", problems[0])
        self.order(kept)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept
        self.selected = {(tasks[item], numbers[item]) for item in kept}

    def order(self, items: list[pytest.Item]) -> None:
        """The order the mode's items run in: collection's (a votes session runs them sample-major)."""

    def asked(self, recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The recorded exchanges of the calls a sample asks again (their providers' keys are needed live)."""
        return [exchange for exchange in recorded if role_of(exchange) == JUDGE]

    def applies(self, recorded: list[dict[str, Any]]) -> bool:
        """Whether a recorded repetition is one this mode samples (a task none of whose repetitions is, is left out)."""
        return bool(self.asked(recorded))

    def held(self, recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The recorded exchanges a sample replays: what its cassette is written with before it runs."""
        return not_judged(recorded)

    def state_of(self, replayed: list[dict[str, Any]], path: Path) -> SampleState:
        """What the sample cassette at ``path`` is, against ``replayed`` (:meth:`held` of its source)."""
        return sample_state(replayed, path)

    def live_problems(self, count: int) -> list[str]:
        """Why ``count`` samples to ask live cannot be: a replay-only session, or the judge route's key missing."""
        missing = f"{count} judge sample(s) have no complete cassette"
        if self.record not in LIVE_MODES:
            return [
                f"{self.option}={self.samples}: {missing} and must be asked live, but this session replays only "
                f"(--consistency-record={self.record}). To ask them: --consistency-record=once with the judge "
                "route's key set. Nothing was sent."
            ]
        found = []
        for provider in sorted(self.providers):
            route = self.state.routes.get("judge" if provider == "openai" else "anthropic_judge")
            if route is None or route.replay_only or not route.api_key:
                env = route.key_env if route is not None else "OPENAI_API_KEY"
                found.append(
                    f"{self.option}={self.samples}: {missing} and must be asked live, which needs the {provider} judge "
                    f"route's key: ${env} is not set. Export {env}=<your key>, or commit the sample cassettes and "
                    "replay them (--consistency-record=none). Nothing was sent."
                )
        return found

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.unjudged and not is_worker(session.config) and session.config.get_verbosity() >= 0:
            terminal = session.config.pluginmanager.get_plugin("terminalreporter")
            if terminal is not None:
                terminal.write_line(
                    f"consistency rejudge: left out {len(self.unjudged)} task(s) {self.left_out}: "
                    f"{', '.join(self.unjudged)}"
                )


class Votes(Rejudge):
    """The votes mode (``--consistency-judge-votes=M``, registered as ``consistency-judge-votes``): the rejudge mode's
    items, cassettes and guard, each repetition's outcome the majority of its judge samples, asked one at a time.

    **The stop rule.** Judge sample j of repetition r is asked only while samples 1..j-1 leave the majority
    undecided (``analysis.judge.majority``, the rule the fold then counts by); one not needed is skipped with the
    reason, asks nothing and writes no cassette. The items run sample-major (every repetition's sample 1, then every
    sample 2, ...), and each sample's outcome goes on the shared board (``shared.board``, as in sequential mode), so
    that an item whose earlier samples run on another xdist worker waits for them there. This cannot deadlock, by
    the argument of ``plugin.rounds`` with samples for rounds: every worker runs its items in the sample-major order,
    so a sample j' < j still to run on any worker comes before that worker's samples j, and sample 1 never waits. A
    scheduler that reorders the items breaks the premise: the wait then ends at ``rounds.WAIT`` and the sample is
    asked, which is harmless (the fold counts by the rule, whatever ran). An earlier sample left out of the session
    (``-k``) is not waited for: it gives no vote.
    """

    option = VOTES_OPTION

    def __init__(self, config: pytest.Config, state: PluginState) -> None:
        settings = state.settings
        if settings.adaptive or settings.sequential:
            other = "--consistency-adaptive" if settings.adaptive else "--consistency-sequential"
            raise pytest.UsageError(
                f"{VOTES_OPTION} and {other} cannot be combined: the votes session's items are judge samples, asked "
                "until each repetition's majority is decided, not repetitions for a task's stopping rule; drop "
                f"{other}"
            )
        super().__init__(config, state)
        if state.board is None:  # each sample's outcome, read by the later samples of its repetition (any worker)
            from pytest_consistency.shared.board import Board

            directory = getattr(config, "workerinput", {}).get(BOARD_KEY)
            state.board = Board(config.stash[SCRATCH].directory(directory, "consistency-votes-"))
        self.board = state.board

    @staticmethod
    def samples_asked(state: PluginState) -> int | None:
        return state.settings.judge_votes

    def surely_asked(self, sample: int) -> bool:
        return sample <= self.samples // 2 + 1

    def order(self, items: list[pytest.Item]) -> None:
        """Sample-major: every repetition's judge sample 1 first (in collection order), then every sample 2, ..."""

        def sample_of(item: pytest.Item) -> int:
            callspec = getattr(item, "callspec", None)
            if callspec is None or PARAM not in callspec.params:
                return 0
            return split(int(callspec.params[PARAM]), self.samples)[1]

        items.sort(key=sample_of)  # stable: the collection order within a sample

    def cassette(self, task_id: str, repeat: int, directory: Path) -> tuple[Path, str, Stop | None]:
        r, j = split(repeat, self.samples)
        decided = self.decided_before(task_id, r, j)
        if decided is not None:
            return sample_cassette(directory, r, j, self.suffix), "none", ("skip", decided)
        if (task_id, repeat) in self.live and not self.surely_asked(j):
            problems = self.live_problems(1)  # refused at collection only for the samples asked whatever happens
            if problems:
                return sample_cassette(directory, r, j, self.suffix), "none", ("fail", problems[0])
        return super().cassette(task_id, repeat, directory)

    def decided_before(self, task_id: str, r: int, j: int) -> str | None:
        """Why sample j of repetition r is not needed (its majority is decided by the samples before it), waiting for
        those another worker runs; None when it is needed."""
        from pytest_consistency.analysis.judge import majority
        from pytest_consistency.plugin.rounds import POLL, WAIT

        if j == 1:
            return None
        earlier = [index_of(r, i, self.samples) for i in range(1, j)]
        awaited = [index for index in earlier if (task_id, index) in self.selected]
        deadline = time.monotonic() + WAIT
        while True:
            marks = self.board.outcomes(task_id)
            votes = [{"pass": True, "fail": False}.get(marks.get(index, "")) for index in earlier]
            outcome, read = majority(votes, self.samples)
            if outcome is not None:
                return (
                    f"majority decided after {read} of {self.samples} samples: repetition {r} of {task_id} "
                    f"{'passes' if outcome else 'fails'} ({VOTES_OPTION})"
                )
            if all(index in marks for index in awaited) or time.monotonic() >= deadline:
                return None  # undecided, or waited long enough: asked (the fold counts by the rule)
            time.sleep(POLL)

    def fold(self, repetitions: list[Any]) -> list[Any]:
        """Each recorded repetition's judge samples as one repetition whose outcome is their majority, counted by the
        stop rule (``analysis.judge.fold``): what the headline figures and the gates read."""
        from pytest_consistency.analysis.judge import fold

        return fold(repetitions, self.samples, votes=True)

    def summarise(self, summary: SessionSummary, repetitions: list[Any]) -> None:
        from pytest_consistency.analysis.judge import judge_summary

        summary.judge = judge_summary(repetitions, self.samples, summary.analysis.confidence, votes=True)

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        mode = "asks missing samples live" if self.record in LIVE_MODES else "replays committed samples only"
        return [
            f"consistency judge votes: each recorded repetition's outcome is the majority of {self.samples} judge "
            f"sample(s), asked one at a time until it is decided; the agent's calls replay from the recording ({mode})"
        ]


def register(config: pytest.Config, state: PluginState) -> None:
    """Register the rejudge role when ``--consistency-rejudge`` is given, the votes role for
    ``--consistency-judge-votes`` (exclusive: ``configure.register_mode``)."""
    if state.settings.rejudge is not None:
        config.pluginmanager.register(Rejudge(config, state), NAME)
    elif state.settings.judge_votes is not None:
        config.pluginmanager.register(Votes(config, state), VOTES_NAME)
