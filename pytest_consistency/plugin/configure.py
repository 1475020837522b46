"""A session's configuration: the settings resolved, each provider's route, the shared limits (throttle, token
budget, adaptive board); then a session mode's role (:func:`register_mode`) and the role objects registered by name
(:func:`roles`).

It runs when the plugin wakes (``dormant``): at ``pytest_configure`` in a session that sets one of its options (or
a credential variable, ...), else when the session first needs the plugin (a marked test collected, a report of a
repetition arriving at xdist's controller); each xdist worker wakes on its own. What only some sessions use (the
limits, adaptive mode's gate check, a session mode) or only the controller (its roles, the run id) is imported
where it is used (``benchmarks/workers.py`` counts a worker's start; ``tests/integration/costs/test_startup_costs``).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_consistency.config.options import CONFIG_FILE
from pytest_consistency.config.settings import resolve
from pytest_consistency.plugin import fixtures, logs
from pytest_consistency.plugin.carried import Kept
from pytest_consistency.plugin.collection import Collection
from pytest_consistency.plugin.fixtures import ROUTE_FIXTURES
from pytest_consistency.plugin.logs import LogRedaction, uninstall
from pytest_consistency.plugin.redaction import SecretsHooks
from pytest_consistency.plugin.state import (
    BOARD_KEY,
    LEDGER_KEY,
    SCRATCH,
    STATE,
    THROTTLE_KEY,
    PluginState,
    is_worker,
)
from pytest_consistency.route.doctor import cross_route_problems
from pytest_consistency.route.resolve import resolve_route
from pytest_consistency.route.route import ROUTE_NAMES
from pytest_consistency.shared.scratch import Scratch

if TYPE_CHECKING:
    from pytest_consistency.config.settings import Settings


def configure(config: pytest.Config, kept: Kept | None = None) -> None:
    """Configure the session and register its roles; ``kept``: what the dormant role kept of the session so far,
    when the plugin woke after the session started (:func:`catch_up`). The marker's line and the fixtures role are
    the dormant role's (``dormant.configure``), in every session."""
    scratch = config.stash[SCRATCH] = Scratch()  # removed at unconfigure, even if configure fails below
    state = PluginState(settings=resolve(config))
    chosen = state.settings
    if chosen.min_pass is not None and chosen.min_rate is not None:
        raise pytest.UsageError(
            f"--consistency-min-pass ({chosen.sources['min_pass']}) and --consistency-min-rate "
            f"({chosen.sources['min_rate']}) are both set: the default bar of a marker is a rule on the "
            "observed count (min_pass) or a verdict on exact tests (min_rate), not both; keep one"
        )
    for name in ROUTE_FIXTURES:  # the agent's route of each provider, and the judge's
        provider_name, route_role = ROUTE_NAMES[name]
        provider = state.providers.get(provider_name)
        if provider is None:
            provider = config.hook.pytest_consistency_provider(name=provider_name, config=config)
            if provider is None:
                raise pytest.UsageError(f"pytest-consistency: no provider called {provider_name!r}")
            state.providers[provider_name] = provider
        state.routes[name] = resolve_route(state.settings, os.environ, provider, route_role)
    for name, problems in cross_route_problems(state.routes, bool(state.settings.same_gateway)).items():
        route = state.routes[name]
        state.routes[name] = replace(route, problems=(*route.problems, *problems))
    state.route = state.routes["openai"]
    concurrency, rpm = state.settings.concurrency, state.settings.rpm
    if concurrency or rpm:
        from pytest_consistency.shared.throttle import Throttle

        workerinput = getattr(config, "workerinput", {})
        directory = scratch.directory(workerinput.get(THROTTLE_KEY), "consistency-throttle-")
        # per provider: a judge's calls to the same API wait for the same slots as the agent's
        state.throttles = {name: Throttle(directory, name, concurrency, rpm) for name in state.providers}
    budget, cost_budget = state.settings.token_budget, state.settings.cost_budget
    if budget or cost_budget:
        from pytest_consistency.shared.ledger import Ledger

        workerinput = getattr(config, "workerinput", {})
        handed = workerinput.get(LEDGER_KEY)
        path = Path(handed) if handed else scratch.directory(None, "consistency-") / "tokens"
        price = None
        if cost_budget:
            from functools import partial

            from pytest_consistency.model.prices import call_cost, price_table

            price = partial(call_cost, table=price_table(state.settings.prices))
        state.ledger = Ledger(path, int(budget) if budget else None, cost_budget, price)
    if state.settings.adaptive and state.settings.sequential:
        raise pytest.UsageError(
            "--consistency-sequential and --consistency-adaptive cannot be combined: adaptive mode keeps the verdicts "
            "of the full run (curtailment), sequential mode decides by an anytime-valid test; choose one"
        )
    if state.settings.repetition_budget and not state.settings.sequential:
        raise pytest.UsageError(
            "--consistency-repetition-budget needs --consistency-sequential: only a sequential verdict stays valid "
            "wherever the run stops (a fixed-n or adaptive run stopped early has no verdict at its n)"
        )
    if state.settings.adaptive or state.settings.sequential:
        from pytest_consistency.shared.board import Board

        refuse_figure_gates(state)
        workerinput = getattr(config, "workerinput", {})
        state.board = Board(scratch.directory(workerinput.get(BOARD_KEY), "consistency-adaptive-"))
    state.cassette_root = state.settings.path("cassettes") or config.rootpath / "cassettes"
    ignore = state.settings.ignore_url
    state.ignore = (re.compile(ignore),) if ignore else ()
    register_mode(config, state)
    if state.settings.judge_flip_max is not None and state.settings.rejudge is None:
        raise pytest.UsageError(
            "--consistency-judge-flip-max gates on the judge's flip rate, which only a rejudge session measures: add "
            "--consistency-rejudge=M (M judge samples per recorded repetition)"
        )
    role_source = state.settings.sources.get("rejudge_role", "default")
    if role_source != "default" and state.settings.rejudge is None:
        where = "" if role_source == "--consistency-rejudge-role" else f" ({role_source})"
        raise pytest.UsageError(
            f"--consistency-rejudge-role{where} chooses the role a rejudge session samples again: add "
            "--consistency-rejudge=M (M samples per recorded repetition)"
        )
    if state.settings.judge_flip_max is not None and state.settings.rejudge_role == "agent":
        raise pytest.UsageError(
            "--consistency-judge-flip-max gates on the judge's flip rate, which a rejudge session sampling the agent "
            "(--consistency-rejudge-role=agent) does not measure: re-judge with the default role (judge) to gate it"
        )
    if not is_worker(config):
        from pytest_consistency.config.shard import run_id_of

        state.run_id = run_id_of(state.settings.run_id, os.environ)
        check_otel(state.settings.otel, state.settings.output)
    config.stash[STATE] = state
    handle = config.pluginmanager.get_plugin(fixtures.NAME)
    if isinstance(handle, fixtures.Fixtures):
        handle.bind(state)
    logs.bind(config, state)
    found = roles(config)
    for name, role in found:
        config.pluginmanager.register(role, name)
    if kept is not None:
        catch_up(state, [role for _, role in found], kept)


def register_mode(config: pytest.Config, state: PluginState) -> None:
    """A session mode's role object, when its option is given (registered before the other roles): the resample mode
    (its plan read and checked now, so that the header says its cost before any call), the rejudge mode or the votes
    mode; two given is a usage error, as each runs the recorded tasks its own way."""
    chosen = state.settings
    if chosen.resample is not None and chosen.rejudge is not None:
        where = [
            flag if chosen.sources[dest] == flag else f"{flag} ({chosen.sources[dest]})"
            for dest, flag in (
                ("resample", "--consistency-resample"),
                ("rejudge", "--consistency-rejudge"),
            )
        ]
        raise pytest.UsageError(
            f"{where[0]} and {where[1]} are both set: resampling samples one step of an agent's recorded trajectory "
            "again, re-judging replays the agent and asks only its judge again; run them as two sessions"
        )
    votes = chosen.judge_votes is not None
    if votes and (chosen.rejudge is not None or chosen.resample is not None):
        dest, flag = (
            ("rejudge", "--consistency-rejudge")
            if chosen.rejudge is not None
            else ("resample", "--consistency-resample")
        )
        where = [
            shown if chosen.sources[name] == shown else f"{shown} ({chosen.sources[name]})"
            for name, shown in (("judge_votes", "--consistency-judge-votes"), (dest, flag))
        ]
        raise pytest.UsageError(
            f"{where[0]} and {where[1]} are both set: each is a session mode that runs the recorded tasks its own way "
            "(votes decide each repetition by a majority of judge samples; re-judging measures the judge; "
            "resampling samples one step of the agent again); run them as two sessions (votes and re-judging share "
            "their judge samples' cassettes)"
        )
    if chosen.resample is not None:
        from pytest_consistency.plugin.resample import register as register_resample

        register_resample(config, state)
    if chosen.rejudge is not None or votes:
        from pytest_consistency.plugin.agent_samples import register as register_rejudge  # or the judge's, or votes

        register_rejudge(config, state)


def catch_up(state: PluginState, found: list[object], kept: Kept) -> None:
    """Hand the roles what they would have kept had they been registered from the start: the failed tests and the
    collection errors (the controller's), the cassette directories pytest's walk left out so far; and, when the
    session started before the plugin woke, the start of the session (each role's ``pytest_sessionstart``, in the
    order pluggy calls them: the last registered first; the secrets role keeps the session's own start time)."""
    state.collector.failed_nodeids |= kept.failed
    state.collection_errors |= kept.collection_errors
    state.cassette_dirs.update(kept.cassette_dirs)
    if kept.session is None:
        return
    for role in reversed(found):
        start = getattr(role, "pytest_sessionstart", None)
        if start is not None:
            start(kept.session)
        if isinstance(role, SecretsHooks):
            role.started = kept.started


def roles(config: pytest.Config) -> list[tuple[str, object]]:
    """The role objects of this process, by the name each is registered under (as pytest-xdist registers its
    ``dsession`` and ``workercontroller``): every hook the plugin implements beyond the entry module's is one of
    theirs. The controller's roles only where every report arrives (not in an xdist worker); the repetition's
    roles once collection finds a marked test (``runtime``); the fixtures role in every session, from its start
    (``dormant``)."""
    found: list[tuple[str, object]] = [
        ("consistency-collection", Collection()),
        ("consistency-secrets", SecretsHooks(config)),
        ("consistency-logs", LogRedaction(config)),
    ]
    if not is_worker(config):  # the controller's modules too: a worker never imports them
        from pytest_consistency.plugin.controller import Controller, JUnitAnnotator

        found += [("consistency-controller", Controller(config)), ("consistency-junit", JUnitAnnotator(config))]
        if config.stash[STATE].settings.plan:  # print the plan and run no test
            from pytest_consistency.plugin.plan import NAME, PlanRole, run_in_process

            run_in_process(config)
            found.append((NAME, PlanRole(config)))
    return found


def check_otel(export: bool, output: str | None) -> None:
    """``--consistency-otel`` and the ``otlp-json`` output fail before any test runs when the SDK is missing or an
    ``OTEL_*`` variable they read cannot be used (the export reads the collector's, the file only the spans'); the
    export and the file themselves are made at the end of the session."""
    option = "--consistency-otel" if export else "--consistency-output"
    if not export and (output or "").partition("=")[0].strip() != "otlp-json":
        return
    from pytest_consistency.report.otlp import NEEDS_EXTRA, sdk_missing
    from pytest_consistency.report.otlp.environment import OtelSetupError
    from pytest_consistency.report.otlp.export import check_environment

    if sdk_missing():
        raise pytest.UsageError(f"{option}: {NEEDS_EXTRA}")
    try:
        check_environment(os.environ, export=export)
    except OtelSetupError as exc:
        raise pytest.UsageError(f"{option}: {exc}") from None


def refuse_figure_gates(state: PluginState) -> None:
    """Adaptive mode keeps verdicts, not figures: a gate on a figure of fewer repetitions would mislead."""
    from pytest_consistency.analysis.adaptive import refused_with_adaptive
    from pytest_consistency.analysis.gates import thresholds_of

    thresholds = thresholds_of(state.settings.value)
    suite_regression = state.settings.suite_regression is True
    if state.settings.sequential:
        from pytest_consistency.plugin.rounds import margin_problem

        thresholds.pop("consistency_gap_max", None)  # decided in rounds (analysis/suite_sequential.py)
        problem = margin_problem(state.settings)
        if problem is not None:
            raise pytest.UsageError(problem)
        suite_regression = False  # asked for without a margin: refused by margin_problem
    mode = "--consistency-sequential" if state.settings.sequential else "--consistency-adaptive"
    problem = refused_with_adaptive(thresholds, suite_regression, mode, mode)
    if problem is not None:
        raise pytest.UsageError(problem)


def report_header(config: pytest.Config) -> list[str]:
    """Which YAML file the settings came from (or that none was read). A session mode says what it does in its own
    role's header lines (``plugin.resample``, ``plugin.rejudge``), after these."""
    state = config.stash.get(STATE, None)
    if state is None:
        return []
    # Without a file, nothing to say to a session that never used the plugin (every pytest run of a project that
    # has it installed), unless asked with -v.
    quiet = state.settings.config_file is None and config.get_verbosity() < 1
    lines = [] if quiet else [config_file_line(state.settings, config.rootpath)]
    return lines


def config_file_line(chosen: Settings, rootdir: Path) -> str:
    """``consistency: config ci/consistency.yaml (--consistency-config)``, relative to rootdir, and why that file."""
    path = chosen.config_file
    if path is None:
        return f"consistency: config none (no --consistency-config, no {CONFIG_FILE} in rootdir)"
    shown = path.relative_to(rootdir) if path.is_relative_to(rootdir) else path
    source = chosen.sources["config"]
    if source == "default":
        why = "found in rootdir"
    elif source.endswith("(consistency_config)"):  # the ini file's path, then the key
        why = f"consistency_config in {Path(source.removesuffix(' (consistency_config)')).name}"
    else:  # --consistency-config, or -o consistency_config
        why = source
    return f"consistency: config {shown} ({why})"


def unconfigure(config: pytest.Config) -> None:
    uninstall(config)
    standin = sys.modules.get("pytest_consistency.capture.standin")  # loaded only if a stand-in key was handed out
    if standin is not None:
        standin.unguard()
    observer = config.stash[STATE].observer if STATE in config.stash else None
    if observer is not None:
        observer.close()
    if SCRATCH in config.stash:
        config.stash[SCRATCH].remove()
