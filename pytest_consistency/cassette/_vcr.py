"""The one module of the package that imports vcrpy: its configuration, its objects and the patches of its internals.

Modelled on pytest-recording's ``_vcr.py``: the rest of the cassette wing extends vcrpy through vcrpy's own
registries (``register_matcher``, ``register_persister``, filters and hooks), handed in by ``scope``; what needs vcrpy's
classes or functions asks this module. vcrpy is optional (the ``openai``/``anthropic`` extras), and a session without
cassettes never loads it, so vcrpy is imported inside the functions, never at this module's top.

The patches of vcrpy's internals, each with the upstream issue it works around:

- ``Patches``/``Swap``/``_Switch``: vcrpy's patchers built once per process, not per cassette, and entered without
  ``mock``'s machinery. No upstream issue: vcrpy builds them per cassette by design (``CassettePatcherBuilder``, which
  vcrpy PR #680 asked to make replaceable, closed), a cost of about 1.5 ms that matters only at hundreds of
  repetitions (docs/performance.md).
- ``_IN_PROCESS``: httpx's ``MockTransport``, ``WSGITransport`` and ``ASGITransport`` left unpatched. No upstream
  issue: vcrpy patches them since PR #972 on purpose (a cassette of a mocked transport is what some users want);
  this plugin records the model's traffic only.
- ``_vcr_reset``: ``force_reset`` narrowed and made safe for other threads: vcrpy issues #212 and #295 (closed as
  stale, PR #300 not merged), and #1051 (open).
- ``_vcr_inflight``: a connection still in use by another thread is not closed under it when the cassette is left.
  No upstream issue (vcrpy closes the cassette's connections since PR #758, for issue #710).
- ``unpatched_network`` and ``build_response`` read vcrpy's private names (the saved originals of httpx's transports,
  ``httpx_stubs._deserialize_response``). No upstream issue: vcrpy has no public way to send past its patches or to
  build an httpx response from a recorded one.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_consistency.cassette import _vcr_inflight, _vcr_reset, bounds

#: Options of vcrpy's merged configuration that belong to its context manager, not to the cassette.
_NOT_CASSETTE = ("path_transformer", "func_path_generator", "record_on_exception")


def available() -> bool:
    """Whether vcrpy is installed (it comes with the ``openai`` and ``anthropic`` extras)."""
    try:
        import vcr  # noqa: F401
    except ImportError:
        return False
    return True


def make_vcr(
    mode: str,
    serializer: str,
    persister: Any,
    matchers: Mapping[str, Callable[[Any, Any], None]],
    before_record_response: Callable[[dict[str, Any]], dict[str, Any]],
    before_save_interaction: Callable[[Any, dict[str, Any]], Any],
    uri: tuple[str, ...] = ("uri",),
) -> Any:
    """vcrpy's ``VCR`` for one cassette: ``matchers`` registered by name and matched on (after vcrpy's ``method`` and
    ``uri``, or ``path`` and ``query`` when any host replays, in their order), ``persister`` registered. The
    serializers are vcrpy's own, by name: ``yaml`` reads with libyaml's ``CSafeLoader`` (``SafeLoader`` without
    libyaml) and ``json`` with the standard library."""
    import vcr

    recorder = vcr.VCR(
        record_mode=mode,
        serializer=serializer,
        match_on=("method", *uri, *matchers),
        # No request filter here: vcrpy would deep-copy every request before it; ``load`` sets the scope's filter.
        before_record_response=before_record_response,
        before_save_interaction=before_save_interaction,
        decode_compressed_response=True,
        record_on_exception=False,
        drop_unused_requests=mode == "all",
    )
    for name, matcher in matchers.items():
        recorder.register_matcher(name, matcher)
    recorder.register_persister(persister)
    return recorder


def load_cassette(recorder: Any, path: Path, before_record_request: Callable[[Any], Any]) -> Any:
    """vcrpy's ``Cassette`` at ``path``, configured by ``recorder``, with ``before_record_request`` as its request
    filter (vcrpy's own chain deep-copies each request first)."""
    from vcr.cassette import Cassette

    config = recorder.get_merged_config(path=str(path))
    for name in _NOT_CASSETTE:
        config.pop(name, None)
    config["before_record_request"] = before_record_request
    return Cassette.load(**config)


class Bounded:
    """vcrpy's serializer of one format, reading only a cassette within the bounds (``bounds``): YAML without anchors
    or aliases, refused from the events of vcrpy's own loader before it builds anything, and no nesting past
    ``bounds.MAX_DEPTH``. Writes as vcrpy's does, but never an alias: vcrpy's dumper writes one for an object
    that two exchanges share (``&id001`` / ``*id001``), which the next replay would refuse."""

    def __init__(self, serializer: Any, loader: Any, dumper: Any = None) -> None:
        self.serializer = serializer
        #: The YAML loader vcrpy reads with (None for JSON, which has no references).
        self.loader = loader
        #: vcrpy's YAML dumper without aliases (None for JSON).
        self.dumper = dumper

    def deserialize(self, text: str) -> Any:
        if self.loader is not None:
            bounds.refuse_references(text, self.loader)
        data = self.serializer.deserialize(text)
        bounds.refuse_depth(data)
        return data

    def serialize(self, cassette_dict: Any) -> str:
        if self.dumper is None:
            return self.serializer.serialize(cassette_dict)  # type: ignore[no-any-return]
        import yaml

        return yaml.dump(cassette_dict, Dumper=self.dumper)  # what vcrpy's serialize does, with its dumper's subclass


@functools.cache
def serializer(name: str) -> Bounded:
    """The serializer of the cassette format ``name`` (``yaml`` or ``json``): vcrpy's, within the bounds. Its YAML
    loader and dumper are vcrpy's (libyaml's ``CSafeLoader`` where installed, refusing the ``!!python`` tags that
    build objects; a dumper that writes none the loader refuses), the private ``_CassetteLoader`` and
    ``_CassetteDumper``: vcrpy has no public name for them."""
    from vcr.serializers import jsonserializer, yamlserializer

    if name == "json":
        return Bounded(jsonserializer, None)

    class Dumper(yamlserializer._CassetteDumper):  # type: ignore[misc,name-defined]
        def ignore_aliases(self, data: Any) -> bool:
            return True  # a cassette is a tree (no cycle), so an object written twice is written out twice

    return Bounded(yamlserializer, yamlserializer._CassetteLoader, Dumper)


def bounded(given: Any) -> Any:
    """``given`` within the bounds: vcrpy's own serializers (what vcrpy hands a persister) are swapped for ours."""
    if isinstance(given, Bounded):
        return given
    from vcr.serializers import jsonserializer, yamlserializer

    if given is yamlserializer:
        return serializer("yaml")
    if given is jsonserializer:
        return serializer("json")
    return given


def deserialize(text: str, serializer: Any) -> Any:
    """vcrpy's reading of a cassette's text: ``(requests, responses[, metadata])``."""
    from vcr.serialize import deserialize

    return deserialize(text, serializer)


def serialize(cassette_dict: Any, serializer: Any) -> str:
    from vcr.serialize import serialize

    return serialize(cassette_dict, serializer)  # type: ignore[no-any-return]


def cassette_not_found() -> type[FileNotFoundError]:
    """vcrpy's ``CassetteNotFoundError``: what a persister raises for a file that is not there (or is empty)."""
    from vcr.persisters.filesystem import CassetteNotFoundError

    return CassetteNotFoundError  # type: ignore[no-any-return]


def decode_response(response: dict[str, Any]) -> dict[str, Any]:
    from vcr.filters import decode_response

    return decode_response(response)  # type: ignore[no-any-return]


def build_response(response: dict[str, Any], module: Any) -> Any:
    """The recorded response as an httpx/httpx2 ``Response``, built exactly as vcrpy's replay builds it."""
    from vcr.stubs.httpx_stubs import _deserialize_response

    return _deserialize_response(response, module)


def request(method: str, uri: str, body: Any, headers: dict[str, Any]) -> Any:
    """vcrpy's ``Request``."""
    from vcr.request import Request

    return Request(method, uri, body, headers)


def record_mode(name: str) -> Any:
    """vcrpy's ``RecordMode`` called ``name``."""
    from vcr.record_mode import RecordMode

    return RecordMode(name)


def _reset_patcher() -> Any:
    """The patcher that puts ``_vcr_reset.force_reset`` in vcrpy's place (entered with a cassette's patches)."""
    from unittest import mock

    import vcr.patch

    return mock.patch.object(
        vcr.patch, "force_reset", functools.partial(_vcr_reset.force_reset, vcr.patch.reset_patchers)
    )


#: vcrpy patches these too, but their traffic never leaves the process: it needs no cassette in any mode.
_IN_PROCESS = (
    ("httpx", "MockTransport", "handle_request", "_HttpxMockTransport_handle_request"),
    ("httpx", "MockTransport", "handle_async_request", "_HttpxMockTransport_handle_async_request"),
    ("httpx", "WSGITransport", "handle_request", "_HttpxWsgiTransport_handle_request"),
    ("httpx", "ASGITransport", "handle_async_request", "_HttpxAsgiTransport_handle_async_request"),
    ("httpx2", "MockTransport", "handle_request", "_Httpx2MockTransport_handle_request"),
    ("httpx2", "MockTransport", "handle_async_request", "_Httpx2MockTransport_handle_async_request"),
    ("httpx2", "WSGITransport", "handle_request", "_Httpx2WsgiTransport_handle_request"),
    ("httpx2", "ASGITransport", "handle_async_request", "_Httpx2AsgiTransport_handle_async_request"),
)
#: The unpatched network transports, for requests that an in-process mock (respx) answers below them.
_NETWORK = {
    ("httpx", False): "_HttpxHttpTransport_handle_request",
    ("httpx", True): "_HttpxAsyncHttpTransport_handle_async_request",
    ("httpx2", False): "_Httpx2HttpTransport_handle_request",
    ("httpx2", True): "_Httpx2AsyncHttpTransport_handle_async_request",
}


def unpatched_network(module_name: str, is_async: bool) -> Any:
    """vcrpy's saved original of ``HTTPTransport.handle_request`` (or the async one), or None."""
    vcr_patch = sys.modules.get("vcr.patch")
    return getattr(vcr_patch, _NETWORK.get((module_name, is_async), ""), None) if vcr_patch else None


class _Switch:
    """Stands in for "the cassette of the running repetition" in vcrpy's patches, which are built only once."""

    def __init__(self, target: Any) -> None:
        self.__dict__["target"] = target

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["target"], name)

    # Special methods are looked up on the type, past ``__getattr__``: forward the ones a cassette has.
    def __len__(self) -> int:
        return len(self.__dict__["target"])

    def __contains__(self, request: Any) -> bool:
        return request in self.__dict__["target"]

    def __str__(self) -> str:
        return str(self.__dict__["target"])


_ABSENT = object()
#: What vcrpy's patch builder imports and patches: when one of these is another module object than at build time
#: (pytester's in-process sessions import them afresh), the patches would miss the classes now in use.
_PATCHED_MODULES = (
    "vcr.patch",
    "http.client",
    "requests",
    "urllib3.connection",
    "urllib3.connectionpool",
    "botocore.awsrequest",
    "httplib2",
    "tornado.simple_httpclient",
    "tornado.curl_httpclient",
    "aiohttp.client",
    "httpx",
    "httpx2",
)


#: Attributes ``mock.patch`` puts back even after deleting them (see ``Swap.__exit__``).
_KEPT_ON_DELETE = ("__doc__", "__module__", "__defaults__", "__annotations__", "__kwdefaults__")


class Swap:
    """One of vcrpy's ``mock.patch.object(target, attribute, new)`` patchers, entered and left as ``mock`` does it.

    Why: ``mock._patch`` pays per entry for machinery vcrpy's patches never use (specs, autospec, ``new_callable``,
    an exit stack, ``patch.multiple``); entering and leaving vcrpy's 30 prepared patches that way was a fifth of
    the cassette scope of a replayed repetition. The effect is ``mock``'s: the original is read from the target's
    own ``__dict__`` when it is there (and set back on exit) or looked up through its classes (and the patch is
    deleted on exit, so the inherited attribute shows again); a missing attribute raises ``AttributeError``.
    """

    __slots__ = ("attribute", "local", "new", "original", "patcher", "target")

    def __init__(self, patcher: Any) -> None:
        self.patcher = patcher
        self.attribute: str = patcher.attribute
        self.new = patcher.new
        self.target: Any = None
        self.original: Any = None
        self.local = False

    def __enter__(self) -> Any:
        target = self.patcher.getter()
        name = self.attribute
        try:
            original, local = target.__dict__[name], True
        except (AttributeError, KeyError):
            original, local = getattr(target, name, _ABSENT), False
        if original is _ABSENT:
            raise AttributeError(f"{target} does not have the attribute {name!r}")
        setattr(target, name, self.new)
        self.target, self.original, self.local = target, original, local
        return self.new

    def __exit__(self, *exc_info: object) -> None:
        target, name, original = self.target, self.attribute, self.original
        self.target = self.original = None
        if self.local:
            setattr(target, name, original)
        else:
            delattr(target, name)
            if not hasattr(target, name) or name in _KEPT_ON_DELETE:
                setattr(target, name, original)


class Patches:
    """vcrpy's patchers, built once around a ``_Switch`` and entered for each repetition's cassette.

    Why: vcrpy builds its patchers anew for every cassette: an import attempt for every HTTP library it knows
    (a failed import is not cached, so absent ones search ``sys.path`` each time), a subclass per connection
    class and a closure per transport. That was ~1.5 ms of every repetition, most of the plugin's cost even when
    a repetition makes no request. Entering prepared patchers costs a tenth of it.

    The patches of in-process transports (``MockTransport``, ``WSGITransport``, ``ASGITransport``) are left out:
    their traffic never leaves the process and needs no cassette in any mode. A set is rebuilt when it has gone
    stale: a patched module was imported afresh, or a patched attribute is no longer what it was at build time
    (another library patched it in between, whose patch vcrpy's closures must wrap).
    """

    def __init__(self, cassette: Any) -> None:
        from vcr.patch import CassettePatcherBuilder, ConnectionRemover
        from vcr.stubs import VCRHTTPResponse

        self.switch = _Switch(cassette)
        self.modules = self._modules()
        in_process = self._in_process()
        #: In vcrpy's order: ``mock.patch.object`` patchers, and context managers that close the connections a
        #: cassette left in urllib3's pools (``ConnectionRemover``).
        self.managers = [
            _vcr_inflight.keep_in_flight(m, ConnectionRemover, VCRHTTPResponse)  # see _vcr_inflight
            for m in CassettePatcherBuilder(self.switch).build()
            if not hasattr(m, "getter") or (m.getter(), m.attribute) not in in_process
        ]
        self.managers.append(_reset_patcher())  # see _vcr_reset: vcrpy's own is unsafe for other threads
        self.patchers = [m for m in self.managers if hasattr(m, "getter")]
        #: What each patch replaces, as found at build time: vcrpy's patches are ``mock.patch.object`` on fixed
        #: objects (a module imported afresh is caught by ``modules``), so the targets are read once here.
        self.checks = [(p.getter(), p.attribute, getattr(p.getter(), p.attribute, _ABSENT)) for p in self.patchers]
        #: What ``applied`` enters: each ``mock.patch.object`` as a ``Swap`` (same effect, a fraction of the work).
        self.entered = [Swap(m) if hasattr(m, "getter") else m for m in self.managers]

    @staticmethod
    def _modules() -> tuple[Any, ...]:
        return tuple(sys.modules.get(name) for name in _PATCHED_MODULES)

    @staticmethod
    def _in_process() -> set[tuple[Any, str]]:
        found = set()
        for module_name, class_name, method, _ in _IN_PROCESS:
            cls = getattr(sys.modules.get(module_name), class_name, None)
            if cls is not None:
                found.add((cls, method))
        return found

    def fresh(self) -> bool:
        modules = sys.modules
        for name, module in zip(_PATCHED_MODULES, self.modules, strict=True):
            if modules.get(name) is not module:
                return False
        for target, attribute, original in self.checks:
            if getattr(target, attribute, _ABSENT) is not original:
                return False
        return True

    @contextlib.contextmanager
    def applied(self, cassette: Any) -> Iterator[None]:
        """The patches in place around the ``with`` body, answering from ``cassette``.

        Entered and left by hand rather than through an ``ExitStack``, which costs about ten calls per manager
        (a third of this scope's cost): each entered manager is left, last first, even when entering a later one
        or leaving another fails, and the first such error is raised after all were left."""
        self.switch.__dict__["target"] = cassette
        entered: list[Any] = []
        try:
            try:
                with _vcr_reset.changing():
                    for manager in self.entered:
                        manager.__enter__()
                        entered.append(manager)
                yield
            finally:
                with _vcr_reset.changing():
                    _leave(entered)
        finally:
            for manager in self.managers:
                # A remover keeps the connections of the cassette it served; the next cassette starts with none.
                connections = getattr(manager, "_connection_pool_to_connections", None)
                if connections is not None:
                    connections.clear()


def _leave(managers: list[Any]) -> None:
    """Leave ``managers`` last first; every one is left even when another raises, and the first error is raised."""
    error: BaseException | None = None
    for manager in reversed(managers):
        try:
            manager.__exit__(None, None, None)
        except BaseException as exc:
            if error is None:
                error = exc
    if error is not None:
        raise error


_patches: Patches | None = None


def patches_for(cassette: Any) -> Patches:
    """The process's prepared patches, rebuilt when stale (see ``Patches``)."""
    global _patches
    if _patches is None or not _patches.fresh():
        _patches = Patches(cassette)
    return _patches
