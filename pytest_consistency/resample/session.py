"""The resample session: what the plugin's hooks ask of ``--consistency-resample`` (the glue; the rest is pure).

Why one object: the plan is read once at configure (so the cost is said in the header, before any call, and a
session that would have to go live without a key is refused before it starts), then consulted by collection (how
many items the task gets, which items run), by each sample's setup (its cassette, its mode, the prefix guard) and
at the end (the distribution). Every process of an xdist run builds the same object from the same options and
files, so every worker makes the same choices.

A resample session runs only the target task, as M repetitions: repetition i is sample i, on the cassette
``<task's cassette dir>/resample/rep<REP>@<STEP>/sample-<i>.yaml``. A sample whose cassette holds its resampled
step replays it offline (the committed demo); a missing one goes live, which needs a recording mode
(``--consistency-record=once``) and the route's key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_consistency.analysis.resample.cost import CostEstimate, estimate
from pytest_consistency.analysis.resample.distribution import rows, sample_of
from pytest_consistency.capture.wire import provider_of
from pytest_consistency.cassette.paths import SUFFIXES, cassette_path, format_hint, other_format
from pytest_consistency.config.options import LIVE_MODES
from pytest_consistency.config.parse import Target
from pytest_consistency.config.settings import Settings
from pytest_consistency.model.cause import Finding
from pytest_consistency.model.records import SUCCESS, RepetitionResult
from pytest_consistency.model.resample import ResampleSummary
from pytest_consistency.resample.guard import hold_prefix
from pytest_consistency.resample.plan import Plan, ResampleError, source_problem, step_problem, unknown_task
from pytest_consistency.resample.prefix import (
    PrefixError,
    first_difference,
    interactions,
    is_complete,
    step_exchanges,
    write_prefix,
)


@dataclass
class ResampleSession:
    plan: Plan
    source_path: Path
    mode: str
    display_root: Path
    source: list[dict[str, Any]] | None = None
    #: Samples (1-based) that go live in this session; the others replay their cassettes.
    live: list[int] = field(default_factory=list)
    cost: CostEstimate | None = None
    #: The source's exchanges replayed before the resampled step (its failed attempts included), and its steps.
    prefix: int = 0
    steps: int = 0
    #: Why the session was refused at collection (an unknown task, a repetition beyond n, no source recording).
    problem: str | None = None

    def covers(self, task_id: str | None) -> bool:
        return self.plan.covers(task_id)

    @property
    def cassettes_dir(self) -> Path:
        return self.plan.samples_dir(self.source_path)

    def shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.display_root))
        except ValueError:
            return str(path)

    # --- configure ------------------------------------------------------------------------------------------

    def check_files(self, keys: Mapping[str, tuple[str | None, str]]) -> None:
        """Read the source recording and the samples on disk; refuse what cannot run (raises ResampleError).

        ``keys`` maps each provider to its route's key (None without one) and the variable it is read from."""
        if self.mode == "off":
            raise ResampleError(
                f"--consistency-resample={self.plan.target}: --consistency-record=off keeps no cassettes, so there is "
                "no recorded prefix to replay; drop --consistency-record=off"
            )
        if not self.source_path.is_file():
            return  # an unknown task, a repetition beyond n, or not recorded yet: said at collection, precisely
        try:
            self.source = interactions(self.source_path)
        except PrefixError as exc:
            raise ResampleError(f"--consistency-resample={self.plan.target}: {exc}") from None
        exchanges = step_exchanges(self.source)
        self.steps = len(exchanges)
        problem = step_problem(self.plan, self.steps, self.shown(self.source_path))
        if problem:
            raise ResampleError(problem)
        self.prefix = length = exchanges[self.plan.step - 1]
        for sample in range(1, self.plan.samples + 1):
            path = self.plan.sample_cassette(self.source_path, sample)
            if self.mode == "all" or not path.is_file():
                self.live.append(sample)
                continue
            try:
                recorded = interactions(path)
            except PrefixError as exc:
                raise ResampleError(f"--consistency-resample={self.plan.target}: {exc}") from None
            if not is_complete(recorded, length):
                self.live.append(sample)  # an interrupted live sample: only its prefix was written
                continue
            differs = first_difference(self.source, recorded, length)
            if differs is not None:
                raise ResampleError(
                    f"--consistency-resample={self.plan.target}: sample cassette {self.shown(path)} no longer starts "
                    f"with repetition {self.plan.source}'s recording (step {differs} differs from "
                    f"{self.shown(self.source_path)}): the repetition was re-recorded since. Delete "
                    f"{self.shown(self.cassettes_dir)} and resample again (--consistency-record=once)"
                )
        self.cost = estimate(self.source, self.prefix + 1, len(self.live))
        if not self.live:
            return
        flag = f"--consistency-resample={self.plan.target}"
        missing = (
            f"{len(self.live)} of {self.plan.samples} sample(s) have no cassette under {self.shown(self.cassettes_dir)}"
        )
        if self.mode not in LIVE_MODES:
            raise ResampleError(
                f"{flag}: {missing} and must be sampled live, but this session replays only "
                f"(--consistency-record={self.mode}). To sample them: --consistency-record=once with the route's key "
                f"set; that would spend {self.cost.sentence().split(': ', 1)[-1]}. Nothing was sent."
            )
        for provider in self.live_providers():
            key, env = keys.get(provider, (None, "OPENAI_API_KEY"))
            if not key:
                raise ResampleError(
                    f"{flag}: {missing} and must be sampled live, which needs the {provider} route's key: "
                    f"${env} is not set. Export {env}=<your key>, or commit the sample cassettes and replay them "
                    "(--consistency-record=none). Nothing was sent, nothing was replayed in its place."
                )

    def live_providers(self) -> list[str]:
        """The APIs the resampled steps spoke, as recorded (a sample will speak them live)."""
        found = []
        for exchange in (self.source or [])[self.prefix :]:
            request = exchange.get("request") or {}
            headers = {str(k).lower(): v for k, v in (request.get("headers") or {}).items()}
            provider = provider_of(headers, str(request.get("uri", "")))
            if provider not in found:
                found.append(provider)
        return found

    def header(self) -> list[str]:
        """The session header's lines: what is resampled, and what it will cost, before anything is sent."""
        plan = self.plan
        first = (
            f"consistency resample: {plan.target}, {plan.samples} sample(s) from repetition {plan.source}'s prefix "
            f"({f'steps 1..{plan.step - 1} replayed' if plan.step > 1 else 'nothing replayed'}), cassettes "
            f"{self.shown(self.cassettes_dir)}"
        )
        if self.cost is None:
            return [first, "consistency resample: cost not estimated (no recording of the repetition yet)"]
        return [first, f"consistency resample cost: {self.cost.sentence()}"]

    # --- collection -------------------------------------------------------------------------------------------

    def repetitions(self, definition_nodeid: str, n: int) -> int:
        """How many repetition items a marked function gets: M when the target task is one of its tasks."""
        task = self.plan.task
        if task == definition_nodeid or task.startswith(definition_nodeid + "["):
            return max(n, self.plan.samples)
        return n

    def select(self, items: Iterable[Any], identify: Any) -> tuple[list[Any], list[Any], str | None]:
        """(kept, dropped, problem): the target task's first M repetitions run, nothing else.

        ``identify(item)`` is (task id, repetition, the n its marker asks for) of a marked repetition item, None
        for any other item."""
        kept: list[Any] = []
        dropped: list[Any] = []
        marked: dict[str, int] = {}
        unmarked: list[str] = []
        for item in items:
            found = identify(item)
            if found is None:
                unmarked.append(item.nodeid)
                dropped.append(item)
                continue
            task, repeat, n = found
            marked.setdefault(task, n)
            (kept if task == self.plan.task and repeat <= self.plan.samples else dropped).append(item)
        problem = unknown_task(self.plan, list(marked), unmarked)
        if problem is None:
            problem = source_problem(self.plan, marked[self.plan.task])
        if problem is None and self.source is None:
            other = other_format(self.source_path)
            advice = (
                # recorded already, in the other format: converting costs nothing, recording again would
                format_hint(self.shown(other), "json" if self.source_path.suffix == ".json" else "yaml")
                if other is not None
                else f"record the task first (pytest '{self.plan.task}' --consistency-record=all), then resample it"
            )
            problem = (
                f"--consistency-resample={self.plan.target}: repetition {self.plan.source} of {self.plan.task} has no "
                f"cassette at {self.shown(self.source_path)}; {advice}"
            )
        self.problem = problem
        return kept, dropped, problem

    def spec(self, spec: Any) -> Any:
        """The target task's marker spec as the samples run it: n = M, k = M when the marker's k was n (else its k,
        at most M)."""
        k = self.plan.samples if spec.k >= spec.n else min(spec.k, self.plan.samples)
        return spec.replaced(n=self.plan.samples, k=k)

    # --- a sample's setup ----------------------------------------------------------------------------------

    def sample_scope(self, sample: int) -> tuple[Path, str]:
        """The sample's cassette and mode: a committed sample replays (``none``); a live one starts as the prefix
        copied from the source recording and records the rest (``new_episodes``, held by :mod:`.guard`)."""
        path = self.plan.sample_cassette(self.source_path, sample)
        if sample not in self.live:
            return path, "none"
        assert self.source is not None  # check_files read it, or the session was refused at collection
        write_prefix(self.source, self.prefix, path)
        return path, "new_episodes"

    def is_live(self, sample: int) -> bool:
        return sample in self.live

    def guard(self, active: Any) -> None:
        """Hold a live sample's cassette to its prefix (:func:`.guard.hold_prefix`) once it was entered."""
        if self.is_live(active.repeat) and active.vcr_cassette is not None:
            hold_prefix(active.vcr_cassette, self.prefix)

    def mismatch_message(self, sample: int, calls: list[Any]) -> str | None:
        """A prefix call that did not replay, named by its step; None when the mismatch (if any) is past the
        prefix (a committed sample whose later steps no longer match)."""
        index = 1
        for call in calls[: self.prefix]:
            if call.error != "replay_mismatch":
                index += int(is_step(call))
            else:
                detail = f" [{call.detail}]" if call.detail else ""
                return (
                    f"resample {self.plan.target}, sample {sample}: the agent's request at step {index} is not the one "
                    f"repetition {self.plan.source} recorded ({self.shown(self.source_path)}){detail}. The prefix must "
                    "replay byte for byte, so that the resampled step sees exactly the recorded context; no live call "
                    "was made. Make the agent deterministic up to the resampled step (same prompts, same parameters), "
                    "or re-record the task."
                )
        return None

    # --- the end ------------------------------------------------------------------------------------------------

    def summarise(self, repetitions: Iterable[RepetitionResult]) -> ResampleSummary | None:
        """The distribution of the decision at step STEP over the samples, and the pass rate after each.

        None when there is nothing to summarise: the session was refused at collection (the task or the repetition
        does not exist, or has no recording), so no sample ran. A section would claim samples of a task that does
        not exist. Under xdist the controlling process does not collect: it knows the refusal from the source
        recording, never read (every refusal but a stale cassette's), and from the target task having no
        repetition at all."""
        step = self.plan.step
        samples = sorted((r for r in repetitions if r.task_id == self.plan.task), key=lambda r: r.repeat)
        if self.problem is not None or self.source is None or not samples:
            return None
        scored, errors = [], []
        for rep in samples:
            if rep.infrastructure or not rep.scored:
                why = rep.message or rep.infrastructure or rep.outcome
                errors.append(f"sample {rep.repeat}: {rep.outcome} ({why})")
                continue
            taken = [call for call in rep.calls if is_step(call)]
            decision = taken[step - 1].decision if len(taken) >= step else None
            key = None if decision is None else decision.key()
            label = None if decision is None else decision.label()
            scored.append(sample_of(key, label, step, rep.outcome in SUCCESS))
        return ResampleSummary(
            task=self.plan.task,
            step=step,
            source=self.plan.source,
            samples=self.plan.samples,
            scored=len(scored),
            steps=self.steps,
            cassettes=self.shown(self.cassettes_dir),
            live=len(self.live),
            estimated_calls=self.cost.calls if self.cost else 0,
            estimated_tokens=self.cost.tokens if self.cost else 0,
            rows=rows(scored),
            errors=errors,
        )


def attribute(tasks: Iterable[Any], result: ResampleSummary | None) -> None:
    """Add the resampling clause to the resampled task's attribution line, after where its repetitions part:
    "repetitions part at step 2 (...); resampling step 2 alone gives 3 distinct decisions in 10 samples; ..."."""
    from pytest_consistency.analysis.trajectory.divergence import add_clause

    if result is None:
        return
    for task in tasks:
        mapped = getattr(task, "trajectory", None)
        if task.task_id == result.task and mapped is not None and mapped.parts:
            add_clause(mapped, result.clause())
        if task.task_id == result.task and task.why is not None:
            confirmed, result.cause = agreement(task.why, result)
            if confirmed is not None:
                task.why = replace(task.why, confirmed=confirmed)


def agreement(why: Finding, result: ResampleSummary) -> tuple[bool | None, str | None]:
    """Whether resampling one step from a replayed prefix agrees with the cause found from the repetitions.

    The samples all send one request (the prefix is replayed), so they differ only by sampling: several decisions
    confirm ``sampling`` at that step; one decision says the step repeats itself when its request does, which
    agrees with a cause in the request (``input``, ``environment``) and refutes ``sampling`` there.
    """
    counted = sum(row.samples for row in result.rows)
    if not counted:
        return None, None
    several = result.distinct > 1
    gave = f"the same request gave {result.distinct} distinct decision(s) in {counted} samples"
    if why.step != result.step:
        where = "after the last step" if why.step is None else f"at step {why.step}"
        return None, f"the cause was found {where} ({why.cause}); resample that step to test it ({gave} here)"
    if why.cause == "sampling":
        if several:
            return True, f"the samples confirm the cause sampling at step {why.step}: {gave}"
        return False, (
            f"the samples do not confirm the cause sampling at step {why.step}: {gave}; the repetitions' decisions "
            "differed for another reason (look at their requests), or resample more"
        )
    if why.cause in ("input", "environment"):
        if several:
            return None, (
                f"the samples differ too ({gave}): sampling plays a part beside the cause {why.cause} found in the "
                "requests"
            )
        return True, (
            f"the samples agree with the cause {why.cause} at step {why.step}: {gave}, so the requests made the "
            "difference"
        )
    return None, f"the cause {why.cause} is not one resampling tests ({gave})"


def is_step(call: Any) -> bool:
    """An answered call with a decision: a step of the trajectory (a retried failed attempt is not)."""
    return call.decision is not None and call.status is not None and 200 <= call.status < 300


def build(settings: Settings, cassette_root: Path, display_root: Path) -> ResampleSession | None:
    """The session's resample plan from its settings, or None when ``--consistency-resample`` is not given."""
    target: Target | None = settings.resample
    if target is None:
        return None
    plan = Plan(target, settings.resample_n, settings.resample_from)
    source_path = cassette_path(cassette_root, plan.task, plan.source, SUFFIXES[settings.cassette_format])
    return ResampleSession(plan, source_path, settings.record, display_root)


def configure(state: Any, rootpath: Path) -> ResampleSession | None:
    """Build the plan and check its files at configure time (raises ResampleError: the plugin's usage error)."""
    session = build(state.settings, state.cassette_root, rootpath)
    if session is not None:
        keys = {
            name: (None if route.replay_only or not route.api_key else route.api_key, route.key_env)
            for name, route in state.routes.items()
        }
        session.check_files(keys)
    return session
