"""Collection: a marked task becomes n items, one per repetition; the shard selection, then a session mode's; the
routes the selected tests use. The role object :class:`Collection` holds the hooks.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_consistency.cassette import folders
from pytest_consistency.config.marker import (
    PARAM,
    MarkerError,
    MarkerSpec,
    rate_warning,
    repetition_id,
    sequential_rate_warning,
    task_id_of,
)
from pytest_consistency.config.options import LIVE_MODES
from pytest_consistency.config.shard import select as select_shard
from pytest_consistency.plugin.fixtures import ROUTE_FIXTURES
from pytest_consistency.plugin.state import STATE, PluginState, is_worker, marker_of

if TYPE_CHECKING:
    from pytest_consistency.cassette.match_rules import MatchRules


def warn_undecidable(metafunc: pytest.Metafunc, spec: MarkerSpec) -> None:
    """A ``min_rate`` task whose n cannot reach a decided PASS (or FAIL) gets one warning at collection, saying the n
    that could: once per task, in one process (each xdist worker collects every task; the first one says it)."""
    config = metafunc.config
    settings = config.stash[STATE].settings
    if settings.sequential:
        alpha = settings.sequential_alpha or round(1.0 - settings.confidence, 12)
        text = sequential_rate_warning(spec, alpha)
    else:
        text = rate_warning(spec, settings.confidence)
    worker = getattr(config, "workerinput", {}).get("workerid")
    if text is None or worker not in (None, "gw0"):
        return
    import warnings

    from pytest_consistency.capture.active import ConsistencyWarning

    warnings.warn_explicit(
        ConsistencyWarning(f"{metafunc.definition.nodeid}: repeat_consistency(min_rate={spec.min_rate:g}): {text}"),
        ConsistencyWarning,
        str(metafunc.definition.path),
        metafunc.definition.function.__code__.co_firstlineno,
    )


class Collection:
    """Collection: one item per repetition (parametrized), numbered before any selection, sharded and narrowed by
    a session mode (to a resample's task); the routes the selected tests use, checked once. Registered as
    ``consistency-collection``."""

    @pytest.hookimpl(trylast=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        marker = metafunc.definition.get_closest_marker("repeat_consistency")
        if marker is None:
            return
        try:
            spec = metafunc.config.stash[STATE].spec(marker)
            problem = None
        except MarkerError as exc:
            problem = str(exc)
        if problem is None:
            problem = repeat_plugin_problem(metafunc)
        if problem is not None:  # outside the except block, so the error shows without a chained traceback
            pytest.fail(f"{metafunc.definition.nodeid}: @pytest.mark.repeat_consistency: {problem}", pytrace=False)
        if spec.min_rate is not None:
            warn_undecidable(metafunc, spec)
        if metafunc.config.stash[STATE].settings.sequential:
            from pytest_consistency.plugin.rounds import gap_in_rounds, pin_k_problem

            pinned = pin_k_problem(spec) if gap_in_rounds(metafunc.config.stash[STATE]) else None
            if pinned is not None:
                pytest.fail(f"{metafunc.definition.nodeid}: {pinned}", pytrace=False)
        state = metafunc.config.stash[STATE]
        mode, count, ids = state.mode, spec.n, repetition_id
        if mode is not None:  # a session mode (re-judging, resampling) makes its own items of a task
            count, ids = mode.repetitions(metafunc.definition.nodeid, count), mode.repetition_id
        metafunc.fixturenames.append(PARAM)
        metafunc.parametrize(PARAM, range(1, count + 1), indirect=True, ids=ids)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Number the items before any selection (``-k``, ``-m``, shard plugins): every shard of a suite then gives a
        task the same position, and a merged report lists tasks as one run over everything would."""
        state = config.stash[STATE]
        for index, item in enumerate(items):
            state.order.setdefault(item.nodeid, index)
        spec = state.settings.shard
        if spec is not None:
            kept, dropped = select_shard(items, *spec)
            if dropped:
                config.hook.pytest_deselected(items=dropped)
                items[:] = kept
        if state.settings.sequential:
            from pytest_consistency.plugin.rounds import in_rounds, round_major

            round_major(state, items, per_repetition=not in_rounds(state))
        if state.mode is not None:  # a session mode's selection (resampling: only the target task's samples run)
            state.mode.select(config, items)

    @pytest.hookimpl(trylast=True)
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        """pytest's walk leaves out the directories that hold only the plugin's cassettes (see ``cassette.folders``);
        ``trylast``, so that a conftest's own answer wins: this role is registered after the initial conftests,
        which a plain hook would then come before."""
        state = config.stash.get(STATE, None)
        if state is None or not folders.skip(collection_path, state.cassette_root, config, state.cassette_dirs):
            return None
        return True

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        state = session.config.stash[STATE]
        items = session.items
        marked = False
        fixturenames: set[str] = set()  # every fixture the selected tests name
        for item in items:
            names = getattr(item, "fixturenames", ())
            fixturenames.update(names)
            callspec = getattr(item, "callspec", None)
            params = {} if callspec is None else callspec.params
            repetition = PARAM in params
            if marked and not repetition:  # its marker would only say what ``marked`` says already
                continue
            marker = marker_of(item)
            # The repetition roles also track the running item for an unmarked test's ``consistency`` handle.
            marked = marked or marker is not None or "consistency" in names
            if marker is not None and repetition:
                tracked = state.track(item)
                nodeid = item.nodeid
                tracked.repeat = int(params[PARAM])
                tracked.task_id = task_id_of(nodeid, tracked.repeat)  # read in every phase
                tracked.order = state.order.get(nodeid, 0)
                tracked.spec = state.spec(marker)
                if state.mode is not None:
                    tracked.spec = state.mode.spec(tracked.task_id, tracked.spec)
        repeated = [tracked for tracked in state.items.values() if tracked.spec is not None]
        if repeated:  # the live status line's totals (``status``)
            state.totals = (len({tracked.task_id for tracked in repeated}), len(repeated))
        if marked:  # the repetition machinery, for a session that repeats tasks or hands out the handle
            from pytest_consistency.plugin.runtime import register

            register(session.config)
        for name, fixtures in ROUTE_FIXTURES.items():
            route = state.routes.get(name)
            if route is None or not fixtures & fixturenames:
                continue
            state.used_routes.add(name)
            if route.problems and not is_worker(session.config):
                # An xdist worker cannot stop the session from collection; there the route fixture fails every
                # test that uses it, with the same message, before any call is made.
                raise pytest.UsageError(route.error_message())
        if marked:  # compiled here, once every conftest is loaded; each cassette scope hands them to its matcher
            settings = state.settings
            state.match_rules = match_rules(session.config, settings.match_ignore, settings.replay_any_host)
        if state.used_routes and preflight_wanted(session, state):
            # The clients and their providers' SDK glue: only for a live session.
            preflight = importlib.import_module("pytest_consistency.capture.preflight")

            state.preflight, problems, passed = preflight.check_used(state.routes, state.used_routes)
            for name, problem in problems.items():
                if not is_worker(session.config):
                    raise pytest.UsageError(problem)
                state.routes[name] = replace(state.routes[name], problems=(*state.routes[name].problems, problem))
            terminal = session.config.pluginmanager.get_plugin("terminalreporter")
            if terminal is not None and session.config.get_verbosity() >= 0:
                for line in passed:  # one line a route, after pytest's "collected N items"
                    terminal.write_line(line)


def preflight_wanted(session: pytest.Session, state: PluginState) -> bool:
    """Whether the routes are checked before the first test: asked for (``--consistency-preflight``), or by default
    when the session records live (``all``; ``once`` and ``new_episodes`` when a selected repetition has no
    cassette yet), unless switched off. A replay, ``off`` (whose calls may be another tool's replays) and a plan
    (``--consistency-plan``), never."""
    wanted, mode = state.settings.preflight, state.settings.record
    if mode == "none" or wanted is False or state.settings.plan:  # a plan sends nothing
        return False
    if wanted:
        return True
    if mode not in LIVE_MODES or is_worker(session.config):
        # Under xdist each worker would check the route at the same moment, and their first calls then start
        # together, which the cross-process rate limit does not yet space reliably: asked for, it runs there too.
        return False
    if mode == "all":
        return True
    from pytest_consistency.cassette import paths

    suffix = paths.SUFFIXES[state.settings.cassette_format]
    return any(
        tracked.spec is not None
        and not paths.cassette_exists(paths.cassette_path(state.cassette_root, tracked.task_id, tracked.repeat, suffix))
        for tracked in state.items.values()
    )


def repeat_plugin_problem(metafunc: pytest.Metafunc) -> str | None:
    """pytest-repeat (``--count``, ``@pytest.mark.repeat``) on a marked task would make n x count items of which
    the task counts n: every task would read ``incomplete``. Refused, naming the fix."""
    count = getattr(metafunc.config.option, "count", None)
    marker = metafunc.definition.get_closest_marker("repeat")
    if marker is not None and marker.args:
        count = marker.args[0]  # as pytest-repeat reads it: the marker wins over --count
    if isinstance(count, int) and count > 1:
        what = f"--count={count}" if marker is None else f"@pytest.mark.repeat({count})"
        return (
            f"pytest-repeat's {what} would repeat a task that repeat_consistency already repeats. Use "
            "repeat_consistency(n=...) for the repetitions, and drop --count (or run the marked tests apart)"
        )
    return None


def match_rules(config: pytest.Config, rules: tuple[str, ...], any_host: bool = False) -> MatchRules:
    """What replays leave out of body matching, once every conftest is loaded (after collection). The rules were
    checked when the option was read (``config.parse.match_rules``); the matcher's module loads only for a session
    that repeats a task or hands out the ``consistency`` handle."""
    from pytest_consistency.cassette.match_rules import compile_rules

    hook = config.hook.pytest_consistency_normalize_request
    if not hook.get_hookimpls():
        return compile_rules(rules, any_host=any_host)
    return compile_rules(rules, lambda body, url: hook(body=body, url=url), any_host)
