"""The options reference (docs/options.md), rendered from the option table: every option, once, as the table has it.

Why generated: a hand-written list drifted (it named 31 of the table's 54 options). The page keeps its
prose; the part between :data:`BEGIN` and :data:`END` is :func:`render`'s, and a docs test regenerates it and compares.
``python scripts/gen_options.py`` writes it (:func:`update`). Nothing here imports pytest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_consistency.config.option import Option
from pytest_consistency.config.options import (
    ANALYSIS_OPTIONS,
    CASSETTE_OPTIONS,
    CORE_OPTIONS,
    GATE_OPTIONS,
    RESAMPLE_OPTIONS,
    ROUTE_OPTIONS,
    TRACE_OPTIONS,
)
from pytest_consistency.config.options_cost import COST_OPTIONS
from pytest_consistency.config.options_sequential import ADAPTIVE_OPTIONS, SEQUENTIAL_OPTIONS


@dataclass(frozen=True)
class Group:
    """Options that belong together, in the order the option reference (docs/options.md) lists them."""

    title: str
    options: tuple[Option[Any], ...]
    #: The docs pages that explain these options in full, as (title, page relative to docs/ with its anchor).
    see: tuple[tuple[str, str], ...]


GROUPS = (
    Group(
        "Repetitions, the YAML file, shards and outputs",
        CORE_OPTIONS,
        (("The marker", "marker.md"), ("Outputs", "outputs.md"), ("CI", "ci.md")),
    ),
    Group(
        "Gates",
        GATE_OPTIONS,
        (
            ("Metrics and verdicts", "metrics.md"),
            ("What a verdict promises", "baselines.md#what-a-verdict-promises"),
            ("Why repetitions part", "causes.md"),
        ),
    ),
    Group(
        "Intervals, verdicts and the baseline",
        ANALYSIS_OPTIONS,
        (
            ("Intervals and baselines", "baselines.md"),
            ("Comparing with a baseline", "baselines.md#comparing-with-a-baseline"),
        ),
    ),
    Group("Adaptive repetitions", ADAPTIVE_OPTIONS, (("Adaptive repetitions", "baselines.md#adaptive-repetitions"),)),
    Group("Sequential verdicts", SEQUENTIAL_OPTIONS, (("Sequential verdicts", "sequential.md"),)),
    Group("Routes and clients", ROUTE_OPTIONS, (("Routes and clients", "route.md"),)),
    Group("Cost", COST_OPTIONS, (("Cost", "cost.md"),)),
    Group("Cassettes", CASSETTE_OPTIONS, (("Cassettes", "cassettes.md"),)),
    Group("Resampling a step", RESAMPLE_OPTIONS, (("Resampling a step", "trajectory.md#resampling-a-step"),)),
    Group("Traces", TRACE_OPTIONS, (("Traces", "traces.md"),)),
)


BEGIN = "<!-- options: generated from pytest_consistency/config/options.py by scripts/gen_options.py; do not edit -->"
END = "<!-- options: end -->"
#: What regenerates the page, for the docs test's message.
COMMAND = "python scripts/gen_options.py"

#: Characters of help text that Markdown would read as a table cell's end, emphasis or an HTML tag.
_ESCAPES = {"|": "\\|", "*": "\\*", "<": "&lt;", ">": "&gt;"}
_SPECIAL = re.compile(r"[|*<>]")
_CODE = re.compile(r"(`[^`]*`)")


def _text(help_text: str) -> str:
    """Help text as a table cell: Markdown's special characters escaped outside its own `code` spans."""
    parts = _CODE.split(help_text)
    return "".join(
        part if i % 2 else _SPECIAL.sub(lambda m: _ESCAPES[m.group(0)], part) for i, part in enumerate(parts)
    )


def _code(text: str) -> str:
    return f"`{text}`"


def flag_cell(option: Option[Any]) -> str:
    """``--flag=METAVAR``; a flag alone; its ``--no-`` twin; "(repeatable)" for an option given once per value."""
    if option.is_flag:
        forms = [option.flag] if option.negation is None else [option.flag, option.negation]
        return ", ".join(_code(form) for form in forms)
    cell = _code(f"{option.flag}={option.metavar}")
    return f"{cell} (repeatable)" if option.is_list else cell


def ini_cell(option: Option[Any]) -> str:
    cell = _code(option.ini)
    if option.old_ini is not None:
        cell = f"{cell} (deprecated: {_code(option.old_ini)})"
    if option.is_flag:
        return f"{cell} (true/false)"
    return f"{cell} (one per line)" if option.is_list else cell


def yaml_cell(option: Option[Any]) -> str:
    if not option.yaml_path:
        return "—"
    cell = _code(option.yaml_key)
    if option.is_flag:
        return f"{cell} (true/false)"
    return f"{cell} (a list)" if option.is_list else cell


def default_cell(option: Option[Any]) -> str:
    """The table's default as a user would write it; a flag is off unless it has a ``--no-`` twin (then the help
    says what decides it); no default is "not set" (the help says what applies then)."""
    value: Any = option.default
    if option.is_flag:
        return "off" if option.negation is None else "—"
    if value is None or value == ():
        return "not set"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return _code(str(value))


def _group(group: Group) -> list[str]:
    see = ", ".join(f"[{title}]({page})" for title, page in group.see)
    lines = [
        f"### {group.title}",
        "",
        f"See {see}.",
        "",
        "| option | ini | YAML | default | meaning |",
        "|---|---|---|---|---|",
    ]
    for option in group.options:
        cells = (flag_cell(option), ini_cell(option), yaml_cell(option), default_cell(option), _text(option.help))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render(groups: Sequence[Group] = GROUPS) -> str:
    """The generated part of docs/options.md, markers included, ending with a newline."""
    count = sum(len(group.options) for group in groups)
    lines = [BEGIN, "", f"{count} options, in {len(groups)} groups.", ""]
    for group in groups:
        lines += [*_group(group), ""]
    lines.append(END)
    return "\n".join(lines) + "\n"


class MarkersMissing(ValueError):
    """The page has no place for the generated reference (its markers are missing, doubled or out of order)."""


def update(page: str, groups: Sequence[Group] = GROUPS) -> str:
    """The page with the part between its markers replaced by :func:`render`'s; the prose around it kept."""
    if page.count(BEGIN) != 1 or page.count(END) != 1 or page.index(BEGIN) > page.index(END):
        raise MarkersMissing(f"the page needs one {BEGIN!r} line and, after it, one {END!r} line")
    before, rest = page.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    return before + render(groups).rstrip("\n") + after
