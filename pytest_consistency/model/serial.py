"""Dataclasses to JSON-ready data and back, driven by their type hints, so the report model round-trips.

Every record of the report is a plain dataclass; this module turns one into dicts, lists and scalars and rebuilds
it from them, so ``from_data(T, to_data(x)) == x`` holds for every report type without a hand-written ``to_dict``
per class that could forget a field. It supports what the model uses: nested dataclasses, ``list``, ``tuple``,
``dict`` with string keys, ``X | None``, ``Literal`` and scalars; ``Any`` fields (recorded answers) pass through.
Unknown keys and missing required fields are a :class:`ReportFormatError` naming the field, so a report written
by another version fails clearly instead of half loading. :func:`check_values` refuses, by field, what JSON can
hold but the model cannot use: numbers beyond a float (``1e400`` reads as infinity) and nesting so deep that
encoding or comparing it again would hit Python's recursion limit.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import sys
import types
import typing
from collections.abc import Hashable
from functools import cache
from typing import Any, TypeVar, Union

T = TypeVar("T")


class ReportFormatError(ValueError):
    """Data does not fit the report model: a missing or unknown field, or a value of the wrong type."""


#: Types returned as they are, looked up before anything else: most values of a report are one of these.
_SCALARS = frozenset({str, int, float, bool, type(None)})


@cache
def _field_names(cls: Hashable) -> tuple[str, ...] | None:
    """The field names of a dataclass type, once per type (None for any other type)."""
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls))
    return None


def to_data(value: Any) -> Any:
    """JSON-ready data for a dataclass (recursively), list, tuple, dict or scalar."""
    kind = typing.cast(Hashable, type(value))  # a type is always hashable; mypy does not see it
    if kind in _SCALARS:
        return value
    names = _field_names(kind)
    if names is not None:
        return {name: to_data(getattr(value, name)) for name in names}
    if isinstance(value, (list, tuple)):
        return [to_data(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_data(item) for key, item in value.items()}
    return value


#: Modules whose types the report model's annotations name, but which the model's modules import only for type
#: checking: a session loads the cause, trajectory, resampling and comparison types once it uses them, not with the
#: records every repetition makes (issue 30). An annotation's name is looked up in its own module first, then here.
DEFERRED = (
    "pytest_consistency.model.cause",
    "pytest_consistency.model.trajectory",
    "pytest_consistency.model.resample",
    "pytest_consistency.model.judge",
    "pytest_consistency.model.user",
    "pytest_consistency.stats.stratified",
)


#: The modules whose names the cached hints and converters were resolved from. A module can be dropped from
#: ``sys.modules`` and imported again as another object (pytester's in-process sessions restore ``sys.modules``), and a
#: deferred module may first load inside such a session; the caches then hold the dropped module's classes.
_RESOLVED_FROM: dict[str, types.ModuleType] = {}


def _current() -> None:
    """Forget every hint and converter resolved from a module that ``sys.modules`` no longer holds (see above)."""
    if any(sys.modules.get(name) is not module for name, module in _RESOLVED_FROM.items()):
        _RESOLVED_FROM.clear()
        _hints.cache_clear()
        _CONVERTERS.clear()


@cache
def _hints(cls: type) -> dict[str, Any]:
    """The type hints of a model class, its names looked up in its own module, then in the deferred modules, loaded
    in order only as far as an annotation needs them: a repetition's payload loads none, a call record the cause and
    trajectory models its decision and digests are, never the resampling model or the statistics."""
    own = _RESOLVED_FROM[cls.__module__] = sys.modules[cls.__module__]
    names, deferred_names = vars(own), {}
    for deferred in DEFERRED:
        try:
            return typing.get_type_hints(cls, globalns=names, localns=names)
        except NameError:
            loaded = _RESOLVED_FROM[deferred] = importlib.import_module(deferred)
            deferred_names.update(vars(loaded))
            names = {**deferred_names, **vars(own)}  # the module's own names win
    return typing.get_type_hints(cls, globalns=names, localns=names)


def from_data(cls: type[T], data: Any, where: str = "") -> T:
    """Rebuild a ``cls`` from :func:`to_data` output; ``where`` names the position in error messages."""
    _current()
    return typing.cast(T, _converter(cls)(data, where or getattr(cls, "__name__", "value")))


#: Where a value is, built only when an error names it: the root's name, or (parent, index or field name).
Where = str | tuple[Any, int | str]
Converter = typing.Callable[[Any, Where], Any]


def _spelled(where: Where) -> str:
    """``tasks[0].repetitions[2].calls[0].status`` from a :data:`Where` chain."""
    keys: list[int | str] = []
    while isinstance(where, tuple):
        where, key = where
        keys.append(key)
    return where + "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in reversed(keys))


def _converter(hint: Any) -> Converter:
    """The function that converts data for ``hint``, built once per hint (a report converts the same few
    dozen hints millions of times: the type is taken apart once, and a position is spelled out only for an error)."""
    try:
        return _CONVERTERS[hint]
    except KeyError:
        made = _CONVERTERS[hint] = _build(hint)
        return made
    except TypeError:  # an unhashable hint: built each time
        return _build(hint)


_CONVERTERS: dict[Any, Converter] = {}


def _build(hint: Any) -> Converter:
    if hint is Any:
        return lambda data, where: data
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return _union(hint, args)
    if origin is typing.Literal:
        allowed = ", ".join(map(repr, args))

        def literal(data: Any, where: Where) -> Any:
            if data not in args:
                raise ReportFormatError(f"{_spelled(where)}: {data!r:.80} is not one of {allowed}")
            return data

        return literal
    if origin is list:
        return _sequence(args[0], list)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence(args[0], tuple)
        return _fixed_tuple(args)
    if origin is dict:
        value_hint = args[1]

        def mapping(data: Any, where: Where) -> Any:
            _expect(data, dict, where)
            convert = _converter(value_hint)
            return {str(key): convert(item, (where, str(key))) for key, item in data.items()}

        return mapping
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _record(hint)
    if hint is float:

        def number(data: Any, where: Where) -> Any:
            if isinstance(data, bool) or not isinstance(data, (int, float)):
                raise ReportFormatError(f"{_spelled(where)}: {data!r:.80} is not a number")
            return float(data)

        return number
    if hint in (int, str, bool):
        kind = hint

        def scalar(data: Any, where: Where) -> Any:
            if type(data) is kind:
                return data
            if not isinstance(data, kind) or (kind is int and isinstance(data, bool)):
                raise ReportFormatError(f"{_spelled(where)}: {data!r:.80} is not a {kind.__name__}")
            return data

        return scalar

    def unsupported(data: Any, where: Where) -> Any:  # a bug in the model, not the data
        raise TypeError(f"{_spelled(where)}: the report model has an unsupported type {hint!r}")

    return unsupported


def _union(hint: Any, args: tuple[Any, ...]) -> Converter:
    optional = type(None) in args
    options = [a for a in args if a is not type(None)]

    def union(data: Any, where: Where) -> Any:
        if data is None and optional:
            return None
        errors = []
        for option in options:
            try:
                return _converter(option)(data, where)
            except ReportFormatError as exc:
                errors.append(str(exc))
        raise ReportFormatError(
            errors[0] if len(errors) == 1 else f"{_spelled(where)}: {data!r:.80} fits none of {hint}"
        )

    return union


def _sequence(item_hint: Any, kind: type) -> Converter:
    def sequence(data: Any, where: Where) -> Any:
        _expect(data, list, where)
        convert = _converter(item_hint)
        items = [convert(item, (where, i)) for i, item in enumerate(data)]
        return items if kind is list else tuple(items)

    return sequence


def _fixed_tuple(args: tuple[Any, ...]) -> Converter:
    def fixed(data: Any, where: Where) -> Any:
        _expect(data, list, where)
        if len(data) != len(args):
            raise ReportFormatError(f"{_spelled(where)}: expected {len(args)} items, got {len(data)}")
        return tuple(_converter(a)(item, (where, i)) for i, (a, item) in enumerate(zip(args, data, strict=True)))

    return fixed


def _record(cls: type) -> Converter:
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    names = frozenset(fields)
    required = frozenset(
        name
        for name, spec in fields.items()
        if spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING
    )
    # Each field's converter, looked up on first use (a field of a type the model cannot read fails only when a
    # report holds it, as before).
    converters: dict[str, Converter] = {}

    def record(data: Any, where: Where) -> Any:
        _expect(data, dict, where)
        if not names.issuperset(data):
            raise ReportFormatError(f"{_spelled(where)}: unknown field(s) {', '.join(sorted(set(data) - names))}")
        kwargs = {}
        for name in fields:  # in the model's order: the first wrong or missing field is the one named
            if name in data:
                convert = converters.get(name)
                if convert is None:
                    convert = converters[name] = _converter(_hints(cls)[name])
                kwargs[name] = convert(data[name], (where, name))
            elif name in required:
                raise ReportFormatError(f"{_spelled(where)}: missing field {name}")
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:  # a record that checks itself (e.g. an interval with low > high)
            raise ReportFormatError(f"{_spelled(where)}: {exc}") from None

    return record


def _expect(data: Any, kind: type, where: Where) -> None:
    if not isinstance(data, kind):
        raise ReportFormatError(
            f"{_spelled(where)}: expected a {'mapping' if kind is dict else kind.__name__}, got {data!r:.80}"
        )


def check_values(data: Any, where: str, max_depth: int) -> None:
    """Refuse, naming the first field, a number that is not finite or nesting deeper than ``max_depth``.

    Iterative, so a value nested deeper than the recursion limit is refused instead of crashing the check; a
    field's path is spelled out only for the error.
    """
    # Each entry: (value, its parent's entry, its key or index, depth); the path is rebuilt from the parents.
    stack: list[tuple[Any, Any, str | int | None, int]] = [(data, None, None, 1)]
    while stack:
        entry = stack.pop()
        item, _, _, depth = entry
        if isinstance(item, float) and not math.isfinite(item):
            raise ReportFormatError(
                f"{_path(entry, where)}: a number beyond the range of a float (read as {item!r}); a "
                "pytest-consistency report holds finite numbers only"
            )
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                raise ReportFormatError(
                    f"{_path(entry, where)}: nested more than {max_depth} levels deep; a recorded answer is at "
                    f"most {max_depth - REPORT_DEPTH} levels deep (MAX_ANSWER_DEPTH)"
                )
            children = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((value, entry, key, depth + 1) for key, value in reversed(list(children)))


def _path(entry: Any, where: str, shown: int = 12) -> str:
    """``where.tasks[0].answer[0]...``: the first ``shown`` steps below ``where``, the rest elided."""
    steps: list[str] = []
    while entry[1] is not None:
        key = entry[2]
        steps.append(f"[{key}]" if isinstance(key, int) else f".{key}")
        entry = entry[1]
    steps.reverse()
    return where + "".join(steps[:shown]) + ("..." if len(steps) > shown else "")


#: Levels of the report's own structure above a recorded answer (report, tasks, task, repetitions, repetition).
REPORT_DEPTH = 5
