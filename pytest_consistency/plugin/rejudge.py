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

from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.capture.active import ActiveRepetition
from pytest_consistency.cassette import paths
from pytest_consistency.config.marker import PARAM, MarkerSpec, judge_sample_id, task_id_of
from pytest_consistency.config.options import LIVE_MODES
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.plugin.state import PluginState, Stop, is_worker, marker_of
from pytest_consistency.rejudge.cassettes import JUDGE, not_judged, role_of, sample_state
from pytest_consistency.rejudge.plan import sample_cassette, source_cassette, split
from pytest_consistency.resample.prefix import PrefixError, interactions, write_cassette

NAME = "consistency-rejudge"
OPTION = "--consistency-rejudge"


class Rejudge:
    """The rejudge mode: its collection, each sample's cassette and guard, its messages and its figures."""

    def __init__(self, config: pytest.Config, state: PluginState) -> None:
        self.config, self.state = config, state
        self.samples: int = state.settings.rejudge or 1
        self.record: str = state.settings.record
        self.suffix = paths.SUFFIXES[state.settings.cassette_format]
        #: Per (task, repetition): the source's exchanges a sample replays (its non-judge ones).
        self.replayed: dict[tuple[str, int], list[dict[str, Any]]] = {}
        #: The (task, item index) pairs whose judge sample is asked live in this session.
        self.live: set[tuple[str, int]] = set()
        #: Marked tasks left out because their recording holds no judge call.
        self.unjudged: list[str] = []
        if self.record == "off":
            raise pytest.UsageError(
                f"{OPTION}={self.samples}: --consistency-record=off keeps no cassettes, so there is no recorded agent "
                "to replay; drop --consistency-record=off"
            )
        state.mode = self

    def shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.config.rootpath))
        except ValueError:
            return str(path)

    # --- the SessionMode protocol ----------------------------------------------------------------------------

    def repetitions(self, nodeid: str, n: int) -> int:
        return n * self.samples

    def repetition_id(self, index: int) -> str:
        return judge_sample_id(*split(index, self.samples))

    def spec(self, task_id: str, spec: MarkerSpec) -> MarkerSpec:
        return spec.replaced(n=spec.n * self.samples)

    def select(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Nothing yet: this mode selects after ``-k`` and the others (:meth:`pytest_collection_modifyitems`)."""

    def replays_task_folder(self, task_id: str) -> bool:
        return True

    def cassette(self, task_id: str, repeat: int, directory: Path) -> tuple[Path, str, Stop | None]:
        r, j = split(repeat, self.samples)
        path = sample_cassette(directory, r, j, self.suffix)
        if (task_id, repeat) not in self.live:
            return path, "none", None
        replayed = self.replayed.get((task_id, r))
        if replayed is None:  # never read: the collection refused the session (an xdist worker fails its items)
            return path, "none", ("fail", f"{OPTION}: repetition {r} of {task_id} has no readable recording")
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
        problems: list[str] = []
        judged: dict[str, bool] = {}
        providers: set[str] = set()
        for item in items:
            callspec = getattr(item, "callspec", None)
            if marker_of(item) is None or callspec is None or PARAM not in callspec.params:
                dropped.append(item)
                continue
            index = int(callspec.params[PARAM])
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
                        f"{OPTION}: repetition {r} of {task} has no cassette at {self.shown(source)}; record the task "
                        f"first (pytest '{task}' --consistency-record=all), then re-judge it"
                    )
                    recorded = []
                except PrefixError as exc:
                    problems.append(f"{OPTION}: {exc}")
                    recorded = []
                judges = [exchange for exchange in recorded if role_of(exchange) == JUDGE]
                judged[task] = judged[task] or bool(judges)
                for exchange in judges:
                    request = exchange.get("request") or {}
                    providers.add("anthropic" if str(request.get("uri", "")).endswith("/messages") else "openai")
                self.replayed[(task, r)] = not_judged(recorded)
            path = sample_cassette(directory, r, j, self.suffix)
            try:
                found = sample_state(self.replayed[(task, r)], path)
            except PrefixError as exc:
                problems.append(f"{OPTION}: {exc}")
                continue
            if found.state == "stale":
                problems.append(
                    f"{OPTION}: judge sample cassette {self.shown(path)} no longer replays repetition {r}'s recording "
                    f"(its call {found.call} differs from {self.shown(source_cassette(directory, r, self.suffix))}): "
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
        if not problems and self.live:
            problems += self.live_problems(providers)
        if problems and not is_worker(config):
            raise pytest.UsageError(problems[0])
        if problems:  # an xdist worker cannot stop the session: one item fails with the message
            kept, dropped = kept[:1], dropped + kept[1:]
            for item in kept:
                self.state.track(item).stop = ("fail", problems[0])
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    def live_problems(self, providers: set[str]) -> list[str]:
        """Why the samples to ask live cannot be: a replay-only session, or the judge route's key missing."""
        missing = f"{len(self.live)} judge sample(s) have no complete cassette"
        if self.record not in LIVE_MODES:
            return [
                f"{OPTION}={self.samples}: {missing} and must be asked live, but this session replays only "
                f"(--consistency-record={self.record}). To ask them: --consistency-record=once with the judge "
                "route's key set. Nothing was sent."
            ]
        found = []
        for provider in sorted(providers):
            route = self.state.routes.get("judge" if provider == "openai" else "anthropic_judge")
            if route is None or route.replay_only or not route.api_key:
                env = route.key_env if route is not None else "OPENAI_API_KEY"
                found.append(
                    f"{OPTION}={self.samples}: {missing} and must be asked live, which needs the {provider} judge "
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
                    f"consistency rejudge: left out {len(self.unjudged)} task(s) whose recording holds no judge call "
                    f"(judge_client, consistency.judging()): {', '.join(self.unjudged)}"
                )


def register(config: pytest.Config, state: PluginState) -> None:
    """Register the rejudge role when ``--consistency-rejudge`` is given."""
    if state.settings.rejudge is not None:
        config.pluginmanager.register(Rejudge(config, state), NAME)
