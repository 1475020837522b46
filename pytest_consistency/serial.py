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
import math
import types
import typing
from functools import cache
from typing import Any, TypeVar, Union

T = TypeVar("T")


class ReportFormatError(ValueError):
    """Data does not fit the report model: a missing or unknown field, or a value of the wrong type."""


#: Types returned as they are, looked up before anything else: most values of a report are one of these.
_SCALARS = frozenset({str, int, float, bool, type(None)})


@cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type, once per type (None for any other type)."""
    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls))
    return None


def to_data(value: Any) -> Any:
    """JSON-ready data for a dataclass (recursively), list, tuple, dict or scalar."""
    kind = type(value)
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


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_data(cls: type[T], data: Any, where: str = "") -> T:
    """Rebuild a ``cls`` from :func:`to_data` output; ``where`` names the position in error messages."""
    return typing.cast(T, _convert(cls, data, where or getattr(cls, "__name__", "value")))


def _convert(hint: Any, data: Any, where: str) -> Any:
    if hint is Any:
        return data
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        errors = []
        for option in options:
            try:
                return _convert(option, data, where)
            except ReportFormatError as exc:
                errors.append(str(exc))
        raise ReportFormatError(errors[0] if len(errors) == 1 else f"{where}: {data!r:.80} fits none of {hint}")
    if origin is typing.Literal:
        if data not in args:
            raise ReportFormatError(f"{where}: {data!r:.80} is not one of {', '.join(map(repr, args))}")
        return data
    if origin is list:
        _expect(data, list, where)
        return [_convert(args[0], item, f"{where}[{i}]") for i, item in enumerate(data)]
    if origin is tuple:
        _expect(data, list, where)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], item, f"{where}[{i}]") for i, item in enumerate(data))
        if len(data) != len(args):
            raise ReportFormatError(f"{where}: expected {len(args)} items, got {len(data)}")
        return tuple(_convert(a, item, f"{where}[{i}]") for i, (a, item) in enumerate(zip(args, data, strict=True)))
    if origin is dict:
        _expect(data, dict, where)
        return {str(key): _convert(args[1], item, f"{where}.{key}") for key, item in data.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        _expect(data, dict, where)
        fields = {f.name: f for f in dataclasses.fields(hint) if f.init}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ReportFormatError(f"{where}: unknown field(s) {', '.join(unknown)}")
        hints = _hints(hint)
        kwargs = {}
        for name, spec in fields.items():
            if name not in data:
                if spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
                    raise ReportFormatError(f"{where}: missing field {name}")
                continue
            kwargs[name] = _convert(hints[name], data[name], f"{where}.{name}")
        try:
            return hint(**kwargs)
        except (TypeError, ValueError) as exc:  # a record that checks itself (e.g. an interval with low > high)
            raise ReportFormatError(f"{where}: {exc}") from None
    if hint is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise ReportFormatError(f"{where}: {data!r:.80} is not a number")
        return float(data)
    if hint in (int, str, bool):
        if not isinstance(data, hint) or (hint is int and isinstance(data, bool)):
            raise ReportFormatError(f"{where}: {data!r:.80} is not a {hint.__name__}")
        return data
    raise TypeError(f"{where}: the report model has an unsupported type {hint!r}")  # a bug in the model, not the data


def _expect(data: Any, kind: type, where: str) -> None:
    if not isinstance(data, kind):
        raise ReportFormatError(f"{where}: expected a {'mapping' if kind is dict else kind.__name__}, got {data!r:.80}")


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
