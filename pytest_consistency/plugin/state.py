"""What the plugin keeps for one pytest session, in one object on ``config.stash``."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import pytest

from pytest_consistency.capture.active import ActiveRepetition
from pytest_consistency.config.marker import MARKER, MarkerSpec, parse_marker
from pytest_consistency.config.settings import Settings
from pytest_consistency.plugin.payload import Collector
from pytest_consistency.shared.scratch import Scratch

if TYPE_CHECKING:  # what a session uses (the route, the budget, the board, the result model) loads with its use
    from pytest_consistency.cassette.match_rules import MatchRules
    from pytest_consistency.model.result import SessionSummary
    from pytest_consistency.route.providers import Provider
    from pytest_consistency.route.route import Route
    from pytest_consistency.shared.board import Board
    from pytest_consistency.shared.ledger import Ledger
    from pytest_consistency.shared.throttle import Throttle


#: What the controller hands each xdist worker (``workerinput``): the shared token ledger, throttle and board.
LEDGER_KEY = "consistency_token_ledger"
THROTTLE_KEY = "consistency_throttle_dir"
BOARD_KEY = "consistency_adaptive_board"
SCRATCH = pytest.StashKey[Scratch]()
#: A repetition the setup wrapper refused ("fail") or curtailed ("skip"), with the reason.
Stop = tuple[Literal["fail", "skip"], str]


class SessionMode(Protocol):
    """A session mode that runs the recorded tasks otherwise (``--consistency-rejudge``, ``--consistency-resample``):
    what collection, each repetition's setup and report, and the session end ask of it. Its role object
    (``plugin.rejudge``, ``plugin.resample``) puts itself on :attr:`PluginState.mode` when it is registered; the
    plugin's modules ask the mode, never which mode it is. The two modes are exclusive (``configure``)."""

    def repetitions(self, nodeid: str, n: int) -> int:
        """How many items the marked function ``nodeid`` gets, its marker asking for ``n`` repetitions."""

    def repetition_id(self, index: int) -> str:
        """The id of item ``index`` (1-based) of a marked task."""

    def spec(self, task_id: str, spec: MarkerSpec) -> MarkerSpec:
        """The marker's spec as the items of ``task_id`` run it."""

    def select(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Narrow ``items`` (in place) as soon as the plugin numbered, sharded and ordered them, before any other
        selection (``-k``, ``-m``); refuses the session (``pytest.UsageError``) when it cannot run. A mode that
        selects after the others (re-judging) does so in a hook of its own, and nothing here."""

    def cassette(self, task_id: str, repeat: int, directory: Path) -> tuple[Path, str, Stop | None] | None:
        """The cassette and record mode of item ``repeat`` of ``task_id`` (``directory``: the task's cassette
        folder), and why it must not run (None when it may); None when the item runs on the task's own cassette."""

    def replays_task_folder(self, task_id: str) -> bool:
        """Whether a replay (``--consistency-record=none``) of ``task_id`` reads the task's ``rep-N`` cassettes, so
        that one missing among recorded ones is named as such (a resampled task replays its samples' own)."""

    def entered(self, active: ActiveRepetition) -> None:
        """The item's cassette was entered (``active.vcr_cassette``)."""

    def mismatch(self, active: ActiveRepetition) -> str | None:
        """What a replay mismatch of the item means in this mode (said before the plugin's own message)."""

    def fold(self, repetitions: list[Any]) -> list[Any]:
        """The session's repetition records as the summary reads them, from its items' (``finish._summarise``, the
        one place the summary is built from the records): re-judging folds each repetition's M judge samples into
        one (its outcome sample 1's, or with ``--consistency-judge-votes`` their majority); resampling keeps them."""

    def summarise(self, summary: SessionSummary, repetitions: list[Any]) -> None:
        """Add the mode's figures to the session summary (``repetitions``: as :meth:`fold` made them)."""


@dataclass(slots=True, eq=False)
class Tracked:
    """What the plugin keeps for one item: a marked repetition (from collection), or an unmarked test that asked
    for the handle or was refused. In :attr:`PluginState.items`, keyed by the item itself.

    Not on the item's ``stash``: a stash read is three Python calls (``get``, ``__getitem__``, ``typing.cast``) and a
    miss raises ``KeyError``; a repetition's hooks read it about fifty times, a tenth of what a repetition cost
    beyond pytest-repeat's. An item hashes by identity, so a dict lookup runs no Python code at all."""

    #: The marker's spec and the task, for a marked repetition (None: not a repetition).
    spec: MarkerSpec | None = None
    task_id: str = ""
    repeat: int = 0
    #: Its position in the collection order before any selection (``PluginState.order``).
    order: int = 0
    #: The running repetition (or an unmarked test's handle), from its protocol's start to its end.
    active: ActiveRepetition | None = None
    #: The scope the setup entered (the cassette, or the replay-only block), closed at teardown.
    scope: ExitStack | None = None
    #: Why the setup must fail it, decided at collection (a resample selection an xdist worker cannot refuse).
    stop: Stop | None = None
    #: Call phases run so far (more than one: a retry plugin ran it again).
    attempts: int = 0
    #: Whether its cassette existed before it ran.
    existed: bool = False


@dataclass(slots=True, eq=False)
class CassetteFolder:
    """A task's cassette folder: its path, how a repetition's cassette under it is shown (``prefix`` + file name),
    and (replay-only: nothing records) whether it exists, looked at once for the task's n repetitions."""

    directory: Path
    prefix: str
    present: bool | None = None


@dataclass
class PluginState:
    """The plugin's state for one session, shared by its roles: settings, routes, items and the summary."""

    settings: Settings
    collector: Collector = field(default_factory=Collector)
    summary: SessionSummary | None = None
    #: ``summary.tolerated_nodeids``, once the verdicts are settled (asked once per failed report afterwards).
    tolerated: frozenset[str] = frozenset()
    report_path: str | None = None
    #: Position of each marked item in the collection order, identical on every xdist worker.
    order: dict[str, int] = field(default_factory=dict)
    route: Route | None = None
    ledger: Ledger | None = None
    preflight: str | None = None
    cassette_root: Path = Path("cassettes")
    #: Which directories below the cassette root hold only cassettes, as the collection walk found them.
    cassette_dirs: dict[str, bool] = field(default_factory=dict)
    #: URL patterns (``--consistency-ignore-url``) that are neither recorded, replayed nor counted.
    ignore: tuple[re.Pattern[str], ...] = ()
    #: Node ids of the collection errors seen by the controller: tolerated repetitions never hide them. A set, since
    #: every xdist worker collects, and reports, the same error.
    collection_errors: set[str] = field(default_factory=set)
    #: Outcomes so far, per task, shared with the workers (``--consistency-adaptive`` only).
    board: Board | None = None
    #: The redacted report data and the errors it was made with (see ``outputs.redacted_report``).
    redacted: tuple[tuple[str, ...], dict[str, Any]] | None = None
    #: Credentials this process saw sent, and with xdist each finished worker's (see ``known``).
    seen_secrets: set[str] = field(default_factory=set)
    #: Other outputs written at the end of the session, as ``format: path``.
    written: list[str] = field(default_factory=list)
    #: The run this session is part of (``config.shard.run_id_of``), set in the controlling process.
    run_id: str | None = None
    #: ``--consistency-otel``: the line saying what the export sent, once it ran.
    otel_line: str | None = None
    #: Errors of the plugin's own outputs and of user hooks, named in the summary and the report.
    errors: list[str] = field(default_factory=list)
    #: Plugins implementing ``pytest_consistency_answers_equivalent``, read once at the first report.
    equivalence_plugins: list[str] | None = None
    #: Whether a payload of this process carried them already (they travel once).
    equivalence_sent: bool = False
    #: The collected selection's marked tasks and repetitions (``Collection``; the live status line's totals), sent
    #: to the controller with the equivalence hook's implementers.
    totals: tuple[int, int] | None = None
    #: How ``consistency.record`` normalises an answer (``fixtures.normalizer``), read once at the first handle.
    normalize: Callable[[Any, str], Any] | None = None
    #: The item whose protocol is running (the ``consistency`` fixture's node: it does not ask for ``request``).
    item: pytest.Item | None = None
    #: The pinned route and provider of each provider name (``route`` is ``routes["openai"]``), the routes whose
    #: fixtures the collected tests use, and each route's limits when --consistency-concurrency/-rpm are set.
    providers: dict[str, Provider] = field(default_factory=dict)
    routes: dict[str, Route] = field(default_factory=dict)
    used_routes: set[str] = field(default_factory=set)
    #: Hosts a live model call of the agent's own client went to that no route names, warned about once each.
    warned_hosts: set[str] = field(default_factory=set)
    _route_hosts: frozenset[str] | None = None
    throttles: dict[str, Throttle] = field(default_factory=dict)
    #: A session mode's role object (``--consistency-rejudge``: :mod:`.rejudge`; ``--consistency-resample``:
    #: :mod:`.resample`), None otherwise.
    mode: SessionMode | None = None
    #: The session-long transport observer of ``--consistency-record=off`` (closed at unconfigure).
    observer: ExitStack | None = None
    #: The routes' key fingerprints and keys for each repetition's cassette scrubber, once the first one asks.
    route_keys: dict[str, str] | None = None
    route_secrets: list[str] | None = None
    #: The match rules compiled after collection; each cassette scope hands them to its body matcher.
    match_rules: MatchRules | None = None
    #: A replay-only repetition's scope without a cassette (network block, observer, stand-in keys) left open at its
    #: teardown for the next repetition of its task, with the task and the stand-in variables (``lifecycle``).
    carried: tuple[str, ExitStack, tuple[str, ...]] | None = None
    #: Each marker's spec, by the marker object (kept, so its id stays its own): the n repetitions of a task share
    #: one marker, parsed once instead of once per repetition.
    specs: dict[int, tuple[pytest.Mark, MarkerSpec]] = field(default_factory=dict)
    #: Per task: what is wrong with its marker, if anything, and whether pytest-recording's marker is on it.
    task_markers: dict[str, tuple[str | None, bool]] = field(default_factory=dict)
    #: Each task's cassette folder, named once for its n repetitions (``lifecycle.RepetitionScope.cassette_of``).
    cassette_folders: dict[str, CassetteFolder] = field(default_factory=dict)
    #: What the plugin keeps for each item it tracks (:class:`Tracked`).
    items: dict[pytest.Item, Tracked] = field(default_factory=dict)

    def route_hosts(self) -> frozenset[str]:
        """The hosts (``host:port``) the session's routes name, worked out once."""
        if self._route_hosts is None:
            from urllib.parse import urlsplit

            self._route_hosts = frozenset(
                urlsplit(route.base_url).netloc.rpartition("@")[2] for route in self.routes.values() if route.base_url
            )
        return self._route_hosts

    def track(self, item: pytest.Item) -> Tracked:
        """The item's record, made on first use."""
        tracked = self.items.get(item)
        if tracked is None:
            tracked = self.items[item] = Tracked()
        return tracked

    def spec(self, marker: pytest.Mark) -> MarkerSpec:
        known = self.specs.get(id(marker))
        if known is not None and known[0] is marker:
            return known[1]
        spec = parse_marker(
            marker.args,
            dict(marker.kwargs),
            repeat_override=self.settings.repeat,
            default_min_pass=1.0 if self.settings.min_pass is None else self.settings.min_pass,
            default_min_rate=self.settings.min_rate,
        )
        self.specs[id(marker)] = (marker, spec)
        return spec


STATE = pytest.StashKey[PluginState]()


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def marker_of(item: pytest.Item) -> pytest.Mark | None:
    """The item's closest ``repeat_consistency`` marker. A marker on the test function is among the item's own
    (pytest copies the function's markers onto each of its items), found there without the walk up the item's
    parents that ``get_closest_marker`` makes (about 2 µs an item, once per repetition at collection); one on a
    class or module is found by that walk. The same marker either way: the walk starts with the item's own."""
    for mark in item.own_markers:
        if getattr(mark, "name", None) == MARKER:
            return mark
    return item.get_closest_marker(MARKER)
