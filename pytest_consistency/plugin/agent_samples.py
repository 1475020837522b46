"""The rejudge mode sampling the agent (``--consistency-rejudge=M --consistency-rejudge-role=agent``), registered as
``consistency-rejudge`` in the judge's place.

Why a subclass of the rejudge role: it is the same mode with the roles swapped. Every marked task's recorded
repetitions r = 1..n are run M times each; item (r, j) (``test_x[rep3@agent2]``) replays repetition r's simulated
user (role ``user``) turn by turn, in order, whatever the user's request now holds, and asks the agent and its judge
again, recording them into its own cassette (``<task dir>/rejudge/rep-<r>/agent-<j>.yaml``, written first as r's
user turns: :mod:`..rejudge.script`); a sample recorded already replays offline. A user call beyond the recorded
ones fails the item, naming it; no user request is ever sent (:func:`..rejudge.guard.hold_to_script`). Marked tasks
whose recording holds no simulated user's call are left out (said in the header). The figures are
:mod:`..analysis.user`'s: the agent's flip rate on a held user script, and the gap split between user and agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.capture.active import ActiveRepetition
from pytest_consistency.config.options import LIVE_MODES
from pytest_consistency.model.result import SessionSummary
from pytest_consistency.plugin.rejudge import NAME, OPTION, Rejudge
from pytest_consistency.plugin.rejudge import register as register_judge
from pytest_consistency.plugin.state import PluginState
from pytest_consistency.rejudge.cassettes import JUDGE, SampleState, role_of
from pytest_consistency.rejudge.plan import split
from pytest_consistency.rejudge.script import USER, script_state, user_turns


class AgentSamples(Rejudge):
    """The rejudge mode with the agent sampled and the simulated user's turns replayed (see the module docstring)."""

    role = "agent"
    left_out = 'whose recording holds no simulated user\'s call (consistency.role("user"))'

    def __init__(self, config: pytest.Config, state: PluginState) -> None:
        super().__init__(config, state)
        #: The routes whose keys the live samples need: the agent's and the judge's, per provider they spoke.
        self.needed: set[str] = set()

    # --- what the rejudge collection reads --------------------------------------------------------------------

    def asked(self, recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
        asked = [exchange for exchange in recorded if role_of(exchange) != USER]
        for exchange in asked if self.applies(recorded) else ():  # a task left out asks nothing
            anthropic = str((exchange.get("request") or {}).get("uri", "")).endswith("/messages")
            if role_of(exchange) == JUDGE:
                self.needed.add("anthropic_judge" if anthropic else "judge")
            else:
                self.needed.add("anthropic" if anthropic else "openai")
        return asked

    def applies(self, recorded: list[dict[str, Any]]) -> bool:
        return bool(user_turns(recorded))

    def held(self, recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return user_turns(recorded)

    def state_of(self, replayed: list[dict[str, Any]], path: Path) -> SampleState:
        return script_state(replayed, path)

    def live_problems(self, count: int) -> list[str]:
        """Why ``count`` samples to ask live cannot be: a replay-only session, or the agent's or judge's route key
        missing."""
        missing = f"{count} agent sample(s) have no complete cassette"
        if self.record not in LIVE_MODES:
            return [
                f"{OPTION}={self.samples}: {missing} and must be asked live, but this session replays only "
                f"(--consistency-record={self.record}). To ask them: --consistency-record=once with the agent's (and "
                "the judge's) route key set. Nothing was sent."
            ]
        found = []
        for name in sorted(self.needed):
            route = self.state.routes.get(name)
            if route is None or route.replay_only or not route.api_key:
                env = route.key_env if route is not None else "OPENAI_API_KEY"
                found.append(
                    f"{OPTION}={self.samples}: {missing} and must be asked live, which needs the {name} route's key: "
                    f"${env} is not set. Export {env}=<your key>, or commit the sample cassettes and replay them "
                    "(--consistency-record=none). Nothing was sent."
                )
        return found

    # --- the SessionMode protocol -----------------------------------------------------------------------------

    def entered(self, active: ActiveRepetition) -> None:
        if active.vcr_cassette is None:
            return
        from pytest_consistency.rejudge.guard import hold_to_script

        # Every request through vcrpy's cassette, held by role: the fast replay path would match the user's turns
        # on their body, which holds the agent's words.
        active.replay = None
        hold_to_script(active.vcr_cassette, (active.task_id, active.repeat) in self.live)

    def mismatch(self, active: ActiveRepetition) -> str | None:
        r, j = split(active.repeat, self.samples)
        counts: dict[str, int] = {}
        item = f"rejudge {active.task_id} rep{r}@agent{j}"
        for call in active.calls:
            counts[call.role] = counts.get(call.role, 0) + 1
            if call.error != "replay_mismatch":
                continue
            if call.role == USER:
                recorded = len(self.replayed.get((active.task_id, r), []))
                return (
                    f"{item}: the simulated user's call {counts[USER]} is beyond rep-{r}'s recording ({recorded} user "
                    "turn(s) recorded): the agent took more turns than the recording. No call was sent."
                )
            whose = "the agent's" if call.role == "agent" else f"the {call.role}'s"
            detail = f" [{call.detail}]" if call.detail else ""
            return (
                f"{item}: {whose} call {counts[call.role]} is not in the sample's cassette: given the same user turns "
                "its input varies between runs (see the cause `input`); replaying an agent sample needs an agent "
                f"whose calls replay. No call was sent in its place.{detail}"
            )
        return None

    def summarise(self, summary: SessionSummary, repetitions: list[Any]) -> None:
        from pytest_consistency.analysis.user import user_split

        summary.simulated_user = user_split(repetitions, self.samples, summary.analysis.confidence)

    # --- pytest's hooks ----------------------------------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        mode = "asks missing samples live" if self.record in LIVE_MODES else "replays committed samples only"
        return [
            f"consistency rejudge: {self.samples} agent sample(s) per recorded repetition; the simulated user's turns "
            f"replay from the recording in order, the agent and its judge are asked again ({mode})"
        ]


def register(config: pytest.Config, state: PluginState) -> None:
    """Register the rejudge role sampling the agent (``--consistency-rejudge-role=agent``), else the judge's
    (``plugin.rejudge.register``)."""
    if state.settings.rejudge is not None and state.settings.rejudge_role == "agent":
        config.pluginmanager.register(AgentSamples(config, state), NAME)
    else:
        register_judge(config, state)
