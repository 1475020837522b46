"""The parsers of the options' values: each takes one value as written and returns it parsed, or raises
:class:`SettingError` saying what is wrong with it (the caller names where the value came from).

The same parser reads a value from the command line, the ini file and the YAML file (see :mod:`.options`, where
each option names its parser). Nothing here imports pytest.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_consistency.config.marker import MAX_REPETITIONS, above_maximum, shown

#: Largest request timeout: the HTTP stack overflows on timeouts of some 10**10 seconds.
MAX_TIMEOUT = 86_400.0


class SettingError(ValueError):
    """A value of one option is invalid; the caller names where it came from."""


def positive_int(raw: Any) -> int:
    if isinstance(raw, bool):
        raise SettingError(f"{shown(raw)} is not a whole number")
    if isinstance(raw, int):
        value = raw
    else:
        digits = str(raw).strip()
        try:
            value = int(digits)
        except ValueError:
            problem = "is too large" if digits.lstrip("+-").isdecimal() else "is not a whole number"
            raise SettingError(f"{shown(raw)} {problem}") from None
    if value < 1:
        raise SettingError(f"{shown(raw)} must be at least 1")
    return value


def repetitions(raw: Any) -> int:
    """A whole number of repetitions per task, 1..:data:`~pytest_consistency.config.marker.MAX_REPETITIONS`."""
    value = positive_int(raw)
    if value > MAX_REPETITIONS:
        raise SettingError(above_maximum(raw))
    return value


def judge_votes(raw: Any) -> int:
    """The judge samples a repetition's outcome is the majority of (``--consistency-judge-votes``): an odd whole number
    of repetitions' worth (1..MAX_REPETITIONS), so that a majority always exists."""
    value = repetitions(raw)
    if value % 2 == 0:
        raise SettingError(f"{shown(raw)} is even: give an odd number, so that a majority always exists")
    return value


def non_negative_int(raw: Any) -> int:
    if raw in (0, "0"):
        return 0
    return positive_int(raw)


def _number(raw: Any) -> float:
    if isinstance(raw, bool):
        raise SettingError(f"{shown(raw)} is not a number")
    try:
        value = float(str(raw).strip()) if not isinstance(raw, (int, float)) else float(raw)
    except ValueError:
        raise SettingError(f"{shown(raw)} is not a number") from None
    except OverflowError:  # an int beyond the float range, e.g. a 400-digit YAML number
        raise SettingError(f"{shown(raw)} is not a finite number") from None
    if not math.isfinite(value):
        raise SettingError(f"{shown(raw)} is not a finite number")
    return value


def _bounded(raw: Any, ok: Callable[[float], bool], requirement: str) -> float:
    value = _number(raw)
    if not ok(value):
        raise SettingError(f"{shown(raw)} {requirement}")
    return value


def percentage(raw: Any) -> float:
    return _bounded(raw, lambda v: 0.0 <= v <= 100.0, "must be within 0..100 (percentage points)")


def cause_limits(raw: Any) -> tuple[tuple[str, float], ...]:
    """``CAUSE=PP`` limits of the gap attributed to a cause: one string (or lines of them), a list of them, or a
    YAML mapping ``{input: 0, route: 0}``; the cause is one of the words of :data:`.cause.CAUSES`."""
    from pytest_consistency.model.cause import CAUSES

    if isinstance(raw, dict):
        items = [(str(cause), value) for cause, value in raw.items()]
    else:
        entries = raw if isinstance(raw, (list, tuple)) else str(raw).splitlines() if isinstance(raw, str) else None
        if entries is None:
            raise SettingError(f"{shown(raw)} is not CAUSE=PP (e.g. input=0)")
        items = []
        for entry in entries:
            if not isinstance(entry, str) or "=" not in entry:
                raise SettingError(f"{shown(entry)} is not CAUSE=PP (e.g. input=0 or sampling=5)")
            cause, _, value = entry.rpartition("=")
            items.append((cause, value))
    limits = []
    for cause, value in items:
        name = " ".join(cause.strip().lower().replace("_", " ").replace("-", " ").split())
        if name not in CAUSES:
            raise SettingError(f"{shown(cause)} is not a cause; the causes are {', '.join(CAUSES)}")
        try:
            limits.append((name, percentage(value)))
        except SettingError as exc:
            raise SettingError(f"{name}={value}: {exc}") from None
    return tuple(limits)


def confidence_level(raw: Any) -> float:
    return _bounded(raw, lambda v: 0.5 <= v < 1.0, "must be at least 0.5 and below 1 (e.g. 0.95)")


def fraction(raw: Any) -> float:
    return _bounded(raw, lambda v: 0.0 <= v <= 1.0, "must be within 0..1")


def open_rate(raw: Any) -> float:
    """A pass rate strictly between 0 and 1 (``min_rate``: a rate of 1 can never be shown, 0 needs no evidence)."""
    return _bounded(raw, lambda v: 0.0 < v < 1.0, "must be strictly between 0 and 1 (use min_pass=1.0 for 'all pass')")


def test_level(raw: Any) -> float:
    """A test's level (a chance of a wrong verdict): strictly between 0 and 0.5."""
    return _bounded(raw, lambda v: 0.0 < v < 0.5, "must be strictly between 0 and 0.5 (e.g. 0.05)")


def positive_number(raw: Any) -> float:
    return _bounded(raw, lambda v: v > 0, "must be greater than 0")


def non_negative_number(raw: Any) -> float:
    return _bounded(raw, lambda v: v >= 0, "must not be negative")


def timeout_seconds(raw: Any) -> float:
    value = positive_number(raw)
    if value > MAX_TIMEOUT:
        raise SettingError(f"{shown(raw)} must be at most {MAX_TIMEOUT:.0f} seconds (one day)")
    return value


def regex(raw: Any) -> str:
    value = text(raw)
    try:
        re.compile(value)
    except re.error as exc:
        raise SettingError(f"{shown(value)} is not a regular expression ({exc})") from None
    return value


def text(raw: Any) -> str:
    if not isinstance(raw, (str, int, float)) or isinstance(raw, bool) or str(raw).strip() == "":
        raise SettingError(f"{shown(raw)} is not a non-empty string")
    return str(raw).strip()


def file_path(raw: Any) -> str:
    """A file or directory name; see :meth:`Settings.path` for what a relative one is relative to."""
    value = text(raw)
    if "\x00" in value:
        raise SettingError(f"{shown(raw)} contains a NUL character, which no file name can hold")
    return value


def named_output(raw: Any) -> str:
    """``NAME=FILE``: a report format and the file to write it to."""
    value = file_path(raw)
    name, sep, path = value.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise SettingError(f"{shown(raw)} is not NAME=FILE (e.g. markdown=summary.md)")
    return f"{name.strip()}={path.strip()}"


def shard_spec(raw: Any) -> tuple[int, int]:
    """``I/N`` with 1 <= I <= N, e.g. ``2/4``."""
    value = text(raw)
    index, sep, count = value.partition("/")
    if not sep or not index.strip().isdecimal() or not count.strip().isdecimal():
        raise SettingError(f"{shown(raw)} is not I/N (e.g. 2/4: the second of four shards)")
    i, n = int(index), int(count)
    if not 1 <= i <= n:
        raise SettingError(f"{shown(raw)}: I must be within 1..N (e.g. 2/4)")
    return i, n


def parse_rule(text: str) -> str:
    """One rule, validated: ``re:PATTERN`` or a dotted JSON path."""
    rule = text.strip()
    if rule.startswith("re:"):
        try:
            re.compile(rule[3:])
        except re.error as exc:
            raise SettingError(f"{rule!r} is not a regular expression after 're:' ({exc})") from None
        if not rule[3:]:
            raise SettingError("'re:' needs a pattern after it, e.g. re:[0-9a-f]{32}")
        return rule
    parts = rule.split(".")
    if not rule or any(not part for part in parts):
        raise SettingError(
            f"{text!r} is neither a JSON path (dotted, * for any key or index: messages.*.name) nor a pattern "
            "(re:REGEX)"
        )
    return rule


def match_rules(raw: Any) -> tuple[str, ...]:
    """Rules of what a replay ignores in request bodies: JSON paths and ``re:`` patterns (see :mod:`.match_rules`)."""
    if isinstance(raw, (list, tuple)):
        items = [item for item in raw]
    elif isinstance(raw, str):
        items = [line for line in raw.splitlines() if line.strip()] or [raw]
    else:
        raise SettingError(f"{shown(raw)} is not a rule or a list of rules")
    rules = []
    for item in items:
        if not isinstance(item, str):
            raise SettingError(f"{shown(item)} is not a rule (a JSON path such as messages.*.name, or re:REGEX)")
        rules.append(parse_rule(item))
    return tuple(rules)


def choice(*allowed: str) -> Callable[[Any], str]:
    def parse(raw: Any) -> str:
        value = str(raw).strip().lower() if isinstance(raw, (str, int, float)) else None
        if value is None or value not in allowed:
            raise SettingError(f"{shown(raw)} is not one of {', '.join(allowed)}")
        return value

    parse.__name__ = "one of " + "/".join(allowed)
    return parse


class Target:
    """``TASK@STEP`` as given: the task id as the report prints it, and the 1-based step to resample. A value written
    out, as :class:`.marker.MarkerSpec` (this module is read at every pytest start)."""

    __slots__ = ("step", "task")

    def __init__(self, task: str, step: int) -> None:
        self.task = task
        self.step = step

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and (self.task, self.step) == (other.task, other.step)

    def __hash__(self) -> int:
        return hash((self.task, self.step))

    def __repr__(self) -> str:
        return f"Target(task={self.task!r}, step={self.step})"

    def __str__(self) -> str:
        return f"{self.task}@{self.step}"


def parse_target(raw: object) -> Target:
    """``TASK@STEP``; the last ``@`` separates them (a parametrized id may hold one)."""
    text = str(raw).strip()
    task, at, step = text.rpartition("@")
    if not at or not task.strip():
        raise SettingError(f"{text!r} is not TASK@STEP (e.g. 'examples/test_x.py::test_y[a]@2')")
    step = step.strip()
    if not step.isdecimal() or int(step) < 1:
        raise SettingError(f"{text!r}: the step after '@' must be a whole number of at least 1, not {step!r}")
    return Target(task.strip(), int(step))


def absolute_path(value: Any, base: Path | None) -> Path:
    path = Path(str(value))
    try:
        path = path.expanduser()
    except RuntimeError:  # "~user" of an unknown user, or no home directory: keep the name as written
        pass
    if path.is_absolute():
        return path
    return (base if base is not None else Path.cwd()) / path


def argparse_type(parse: Callable[[str], Any], metavar: str) -> Callable[[str], Any]:
    """An option's parser as an argparse ``type``: an invalid value is argparse's usage error, naming the flag."""

    def convert(raw: str) -> Any:
        try:
            return parse(raw)
        except SettingError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = metavar.lower()
    return convert


#: The fields of one model's entry under ``prices:`` (US dollars per million tokens); the first two are required.
PRICE_FIELDS = ("input", "output", "cached_input", "cache_write")


#: The judge route's settings (``--consistency-judge``, YAML ``judge:``), each parsed as the agent route's option.
JUDGE_FIELDS = ("base_url", "model", "api_key_env", "temperature")


def judge_settings(raw: Any) -> tuple[tuple[str, Any], ...]:
    """The judge's route settings: a YAML mapping ``{model: ..., temperature: 0}`` or ``NAME=VALUE`` strings (a list
    of them, or one per line; a name given twice keeps the last), in :data:`JUDGE_FIELDS` order."""
    if isinstance(raw, dict):
        pairs = list(raw.items())
    else:
        entries = raw if isinstance(raw, (list, tuple)) else str(raw).splitlines() if isinstance(raw, str) else None
        if entries is None or not all(isinstance(entry, str) and "=" in entry for entry in entries):
            raise SettingError(f"{shown(raw)} is not NAME=VALUE (e.g. model=gpt-4o-mini)")
        pairs = [(name.strip(), value.strip()) for name, _, value in (entry.partition("=") for entry in entries)]
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name not in JUDGE_FIELDS:
            raise SettingError(
                f"{shown(name)} is not a setting of the judge's route; they are {', '.join(JUDGE_FIELDS)}"
            )
        try:
            found[name] = non_negative_number(value) if name == "temperature" else text(value)
        except SettingError as exc:
            raise SettingError(f"{name}: {exc}") from None
    return tuple((name, found[name]) for name in JUDGE_FIELDS if name in found)


def price_entries(raw: Any) -> tuple[tuple[str, Any], ...]:
    """Prices per model, US dollars per million tokens: a YAML mapping ``{MODEL: {input, output, cached_input,
    cache_write}}`` (``cached_input`` defaults to ``input``: a model without a cache discount; ``cache_write`` too),
    or ``MODEL=INPUT,OUTPUT[,CACHED_INPUT[,CACHE_WRITE]]`` strings (a list of them, or one per line)."""
    from pytest_consistency.model.prices import Price  # the table's type: only when prices are given

    items: list[tuple[str, dict[str, Any]]] = []
    if isinstance(raw, dict):
        for model, fields in raw.items():
            if not isinstance(fields, dict):
                raise SettingError(
                    f"{shown(model)}: expected a mapping of {', '.join(PRICE_FIELDS)}, not {shown(fields)}"
                )
            unknown = sorted(str(name) for name in fields if name not in PRICE_FIELDS)
            if unknown:
                raise SettingError(
                    f"{shown(model)}: unknown field(s) {', '.join(unknown)}; the fields are "
                    f"{', '.join(PRICE_FIELDS)} (US dollars per million tokens)"
                )
            items.append((model, fields))
    else:
        entries = raw if isinstance(raw, (list, tuple)) else str(raw).splitlines() if isinstance(raw, str) else None
        if entries is None:
            raise SettingError(
                f"{shown(raw)} is not MODEL=INPUT,OUTPUT[,CACHED_INPUT] (e.g. gpt-4o-mini=0.15,0.6,0.075)"
            )
        for entry in entries:
            model, sep, values = str(entry).rpartition("=")
            parts = [part.strip() for part in values.split(",")]
            if not sep or not 2 <= len(parts) <= len(PRICE_FIELDS):
                raise SettingError(
                    f"{shown(entry)} is not MODEL=INPUT,OUTPUT[,CACHED_INPUT[,CACHE_WRITE]] (US dollars per million "
                    "tokens, e.g. gpt-4o-mini=0.15,0.6,0.075)"
                )
            items.append((model, dict(zip(PRICE_FIELDS, parts, strict=False))))
    table = []
    for model, fields in items:
        name = str(model).strip() if isinstance(model, (str, int, float)) and not isinstance(model, bool) else ""
        if not name:
            raise SettingError(f"{shown(model)} is not a model name")
        missing = [field for field in PRICE_FIELDS[:2] if fields.get(field) is None]
        if missing:
            raise SettingError(f"{name}: {' and '.join(missing)} missing (US dollars per million tokens)")
        try:
            amounts = {field: non_negative_number(value) for field, value in fields.items() if value is not None}
        except SettingError as exc:
            raise SettingError(f"{name}: {exc}") from None
        cached = amounts.get("cached_input", amounts["input"])
        table.append((name, Price(amounts["input"], amounts["output"], cached, amounts.get("cache_write"))))
    return tuple(table)
