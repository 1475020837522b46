"""Every option of the plugin, declared once, with its command-line flag, ini key and YAML key.

One table drives ``pytest_addoption``, the ini and YAML parsing and the precedence CLI > YAML > ini > default
(:mod:`.settings`), and the options of the ``pytest-consistency`` command (:mod:`.cli`), so an option cannot
exist in one place and be forgotten in another. Values are validated by the same function wherever they come
from, and an invalid one is an error naming where it came from. Nothing here imports pytest.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml


from pytest_consistency.analysis.gates import GATES, Gate
from pytest_consistency.config.marker import MAX_REPETITIONS, above_maximum, shown
from pytest_consistency.stats.significance import TESTS
from pytest_consistency.stats.suite import TARGETS

#: Largest YAML config file read; a settings file is a few lines, so a bigger one is the wrong file.
MAX_CONFIG_BYTES = 1_000_000
#: Deepest nesting of mappings and lists in the YAML config (the settings themselves use two levels).
MAX_CONFIG_DEPTH = 20
#: Largest request timeout: the HTTP stack overflows on timeouts of some 10**10 seconds.
MAX_TIMEOUT = 86_400.0


class SettingError(ValueError):
    """A value of one option is invalid; the caller names where it came from."""


class ConfigError(ValueError):
    """The YAML config file cannot be used; the message names the file, the line and the fix."""


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


def confidence_level(raw: Any) -> float:
    return _bounded(raw, lambda v: 0.5 <= v < 1.0, "must be at least 0.5 and below 1 (e.g. 0.95)")


def fraction(raw: Any) -> float:
    return _bounded(raw, lambda v: 0.0 <= v <= 1.0, "must be within 0..1")


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
    """Rules of what a replay ignores in request bodies: JSON paths and ``re:`` patterns (see :mod:`.matching`)."""
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


@dataclass(frozen=True)
class Option:
    dest: str
    flag: str
    yaml_path: tuple[str, ...]
    parse: Callable[[Any], Any]
    help: str
    default: Any = None
    metavar: str = "VALUE"
    is_flag: bool = False
    #: Given several times on the command line (each adds), a YAML list, or one value per line in the ini file.
    is_list: bool = False

    @property
    def ini(self) -> str:
        return self.dest

    @property
    def yaml_key(self) -> str:
        return ".".join(self.yaml_path)


def _gate_option(gate: Gate) -> Option:
    parse = non_negative_int if gate.count else fraction if gate.probability else percentage
    return Option(gate.dest, gate.flag, ("gates", gate.dest), parse, gate.help, metavar=gate.metavar)


#: One option per gate of :data:`~pytest_consistency.analysis.gates.GATES`: a gate is declared once, there.
GATE_OPTIONS = tuple(_gate_option(gate) for gate in GATES)

ANALYSIS_OPTIONS = (
    Option(
        "consistency_confidence",
        "--consistency-confidence",
        ("analysis", "confidence"),
        confidence_level,
        "confidence level of every interval and test (default 0.95)",
        metavar="LEVEL",
        default=0.95,
    ),
    Option(
        "consistency_interval_target",
        "--consistency-interval-target",
        ("analysis", "target"),
        choice(*TARGETS),
        "what the suite intervals describe: suite (these tasks; repetition noise only; default) or population "
        "(tasks like these; task sampling too)",
        metavar="TARGET",
        default="suite",
    ),
    Option(
        "consistency_gate_on",
        "--consistency-gate-on",
        ("gates", "on"),
        choice("point", "bound"),
        "decide gates on the point estimate (default) or on the interval's bound, with an inconclusive state "
        "when the interval straddles the threshold",
        metavar="WHAT",
        default="point",
    ),
    Option(
        "consistency_inconclusive",
        "--consistency-inconclusive",
        ("gates", "inconclusive"),
        choice("fail", "pass"),
        "exit status of an inconclusive gate with --consistency-gate-on=bound: fail (default) or pass",
        metavar="AS",
        default="fail",
    ),
    Option(
        "consistency_baseline",
        "--consistency-baseline",
        ("baseline", "report"),
        file_path,
        "compare with an earlier JSON report (e.g. the main branch's): per-task regressions, gap change, route "
        "and token changes",
        metavar="FILE",
    ),
    Option(
        "consistency_test",
        "--consistency-test",
        ("baseline", "test"),
        choice(*TESTS),
        "one-sided exact test of a per-task regression against the baseline: boschloo (default) or fisher",
        metavar="TEST",
        default="boschloo",
    ),
    Option(
        "consistency_suite_regression",
        "--consistency-suite-regression",
        ("baseline", "suite_regression"),
        choice("true", "false"),
        "with --consistency-baseline: fail the session when the suite-level exact stratified test finds a drop in "
        "the pass rate over the tasks both runs share (one-sided, at 1 - confidence)",
        is_flag=True,
    ),
)

CORE_OPTIONS = (
    Option(
        "consistency_config",
        "--consistency-config",
        (),
        file_path,
        "YAML file with consistency settings (gates, repeat, route, cassettes); CLI options override it",
        metavar="FILE",
    ),
    Option(
        "consistency_repeat",
        "--consistency-repeat",
        ("repeat",),
        repetitions,
        f"override n of every repeat_consistency marker (at most {MAX_REPETITIONS})",
        metavar="N",
    ),
    Option(
        "consistency_min_pass",
        "--consistency-min-pass",
        ("min_pass",),
        fraction,
        "default min_pass for markers that do not set it: the pass rate at which a task passes as a whole",
        metavar="F",
    ),
    Option(
        "consistency_shard",
        "--consistency-shard",
        ("shard",),
        shard_spec,
        "run shard I of N (e.g. 2/4), every repetition of a task in one shard; its verdicts and gates are decided "
        "once, by `pytest-consistency merge` of every shard's report, so a shard exits 0 unless something broke",
        metavar="I/N",
    ),
    Option(
        "consistency_report",
        "--consistency-report",
        ("report",),
        file_path,
        "write the machine-readable JSON report to FILE",
        metavar="FILE",
    ),
    Option(
        "consistency_md",
        "--consistency-md",
        ("outputs", "markdown"),
        file_path,
        "write the Markdown summary to FILE (it is also appended to $GITHUB_STEP_SUMMARY when that is set)",
        metavar="FILE",
    ),
    Option(
        "consistency_no_md",
        "--no-consistency-md",
        ("outputs", "no_step_summary"),
        choice("true", "false"),
        "do not append the Markdown summary to $GITHUB_STEP_SUMMARY",
        is_flag=True,
    ),
    Option(
        "consistency_html",
        "--consistency-html",
        ("outputs", "html"),
        file_path,
        "write the self-contained HTML page (tasks x repetitions grid, routes, answers) to FILE",
        metavar="FILE",
    ),
    Option(
        "consistency_output",
        "--consistency-output",
        ("outputs", "other"),
        named_output,
        "write the report format NAME (built in: terminal, json, markdown, html, junit; or one a "
        "pytest_consistency_report_format hook provides) to FILE",
        metavar="NAME=FILE",
    ),
)

ROUTE_OPTIONS = (
    Option(
        "consistency_base_url",
        "--consistency-base-url",
        ("route", "base_url"),
        text,
        "base URL of the OpenAI-compatible API for every repetition (else OPENAI_BASE_URL, else OpenAI's)",
        metavar="URL",
    ),
    Option(
        "consistency_model",
        "--consistency-model",
        ("route", "model"),
        text,
        "model id applied to every request that does not name one",
        metavar="MODEL",
    ),
    Option(
        "consistency_api_key_env",
        "--consistency-api-key-env",
        ("route", "api_key_env"),
        text,
        "name of the environment variable that holds the API key (default OPENAI_API_KEY); "
        "keys are never taken on the command line",
        metavar="VAR",
        default="OPENAI_API_KEY",
    ),
    Option(
        "consistency_timeout",
        "--consistency-timeout",
        ("route", "timeout"),
        timeout_seconds,
        "request timeout in seconds (default 60, at most 86400)",
        metavar="SECONDS",
        default=60.0,
    ),
    Option(
        "consistency_max_retries",
        "--consistency-max-retries",
        ("route", "max_retries"),
        non_negative_int,
        "SDK retries per request (default 1)",
        metavar="N",
        default=1,
    ),
    Option(
        "consistency_temperature",
        "--consistency-temperature",
        ("route", "temperature"),
        non_negative_number,
        "temperature applied to requests that do not set one",
        metavar="T",
    ),
    Option(
        "consistency_seed",
        "--consistency-seed",
        ("route", "seed"),
        non_negative_int,
        "seed applied to requests that do not set one",
        metavar="SEED",
    ),
    Option(
        "consistency_retries_max",
        "--consistency-retries-max",
        ("route", "retries_max"),
        non_negative_int,
        "retries per request above which a repetition counts as route drift (default: the route's max_retries)",
        metavar="N",
    ),
    Option(
        "consistency_token_budget",
        "--consistency-token-budget",
        ("route", "token_budget"),
        positive_int,
        "stop making live calls once the session used more than N tokens, and fail the session",
        metavar="N",
    ),
    Option(
        "consistency_preflight",
        "--consistency-preflight",
        ("route", "preflight"),
        choice("true", "false"),
        "make one minimal request before the first test and abort on a broken route",
        is_flag=True,
    ),
    Option(
        "consistency_concurrency",
        "--consistency-concurrency",
        ("route", "concurrency"),
        positive_int,
        "at most N live requests in flight per route at once, across every xdist worker of the session (replays "
        "are never held back); time spent waiting is reported per repetition and kept out of latency",
        metavar="N",
    ),
    Option(
        "consistency_rpm",
        "--consistency-rpm",
        ("route", "rpm"),
        positive_int,
        "start at most N live requests per minute per route, across every xdist worker of the session",
        metavar="N",
    ),
    Option(
        "consistency_anthropic_base_url",
        "--consistency-anthropic-base-url",
        ("routes", "anthropic", "base_url"),
        text,
        "base URL of the Anthropic route, without /v1 (else ANTHROPIC_BASE_URL, else https://api.anthropic.com)",
        metavar="URL",
    ),
    Option(
        "consistency_anthropic_model",
        "--consistency-anthropic-model",
        ("routes", "anthropic", "model"),
        text,
        "model id of the Anthropic route, applied to requests that do not name one (else ANTHROPIC_MODEL)",
        metavar="MODEL",
    ),
    Option(
        "consistency_anthropic_key_env",
        "--consistency-anthropic-key-env",
        ("routes", "anthropic", "api_key_env"),
        text,
        "environment variable holding the Anthropic token (default: ANTHROPIC_AUTH_TOKEN, else ANTHROPIC_API_KEY)",
        metavar="VAR",
    ),
    Option(
        "consistency_same_gateway",
        "--consistency-same-gateway",
        ("routes", "same_gateway"),
        choice("true", "false"),
        "the OpenAI and Anthropic routes must reach the same gateway (scheme, host and port): refuse the session "
        "before any call when their base URLs point at different ones",
        is_flag=True,
    ),
    Option(
        "consistency_ignore_url",
        "--consistency-ignore-url",
        ("route", "ignore_url"),
        regex,
        "regular expression of request URLs that are neither recorded, replayed nor counted (background "
        "telemetry, e.g. /traces/ingest); join several with |",
        metavar="REGEX",
    ),
)

ADAPTIVE_OPTIONS = (
    Option(
        "consistency_adaptive",
        "--consistency-adaptive",
        ("adaptive", "enabled"),
        choice("true", "false"),
        "stop repeating a task once its verdict (min_pass) can no longer change: the same verdicts, fewer calls",
        is_flag=True,
    ),
    Option(
        "consistency_n_min",
        "--consistency-n-min",
        ("adaptive", "n_min"),
        repetitions,
        "with --consistency-adaptive: run at least N repetitions of every task (default 1)",
        metavar="N",
        default=1,
    ),
)

CASSETTE_OPTIONS = (
    Option(
        "consistency_cassettes",
        "--consistency-cassettes",
        ("cassettes", "dir"),
        file_path,
        "directory of the per-repetition cassettes (default: cassettes under rootdir)",
        metavar="DIR",
        default="cassettes",
    ),
    Option(
        "consistency_cassette_format",
        "--consistency-cassette-format",
        ("cassettes", "format"),
        choice("yaml", "json"),
        "file format of the cassettes written and read: yaml (rep-<i>.yaml; default) or json (rep-<i>.json, "
        "parsed about 5 times faster; convert existing ones with: pytest-consistency cassettes convert --to json)",
        metavar="FORMAT",
        default="yaml",
    ),
    Option(
        "consistency_record",
        "--consistency-record",
        ("cassettes", "record"),
        choice("none", "once", "new_episodes", "all", "off"),
        "cassette mode: none (replay only, network blocked; default), once, new_episodes, all (re-record), "
        "off (no cassettes, live calls)",
        metavar="MODE",
        default="none",
    ),
    Option(
        "consistency_match_ignore",
        "--consistency-match-ignore",
        ("cassettes", "match_ignore"),
        match_rules,
        "leave a part of request bodies out of replay matching: a JSON path (messages.*.name; * is any key or "
        "index) or re:REGEX (masked in every string: a timestamp, a random id); give it once per rule",
        metavar="RULE",
        default=(),
        is_list=True,
    ),
    Option(
        "consistency_record_on_exception",
        "--consistency-record-on-exception",
        ("cassettes", "record_on_exception"),
        choice("true", "false"),
        "keep the cassette of a repetition that raised something other than an assertion (default: drop it)",
        is_flag=True,
    ),
)


@dataclass(frozen=True)
class Target:
    """``TASK@STEP`` as given: the task id as the report prints it, and the 1-based step to resample."""

    task: str
    step: int

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


RESAMPLE_OPTIONS = (
    Option(
        "consistency_resample",
        "--consistency-resample",
        ("resample", "step"),
        parse_target,
        "resample step STEP of task TASK (the task id as the report prints it) from a recorded repetition's exact "
        "prefix: its first STEP-1 calls replay from its cassette, step STEP and the rest run M times "
        "(docs/trajectory.md)",
        metavar="TASK@STEP",
    ),
    Option(
        "consistency_resample_n",
        "--consistency-resample-n",
        ("resample", "n"),
        repetitions,
        "with --consistency-resample: the number of samples M (default 10)",
        metavar="M",
        default=10,
    ),
    Option(
        "consistency_resample_from",
        "--consistency-resample-from",
        ("resample", "from"),
        repetitions,
        "with --consistency-resample: the repetition whose prefix is replayed (default 1, the first)",
        metavar="REP",
        default=1,
    ),
)

OPTIONS = CORE_OPTIONS + GATE_OPTIONS + ANALYSIS_OPTIONS + ADAPTIVE_OPTIONS + ROUTE_OPTIONS + CASSETTE_OPTIONS
OPTIONS += RESAMPLE_OPTIONS
BY_DEST = {option.dest: option for option in OPTIONS}


def argparse_type(option: Option) -> Callable[[str], Any]:
    """The option's parser as an argparse ``type``: an invalid value is argparse's usage error, naming the flag."""

    def convert(raw: str) -> Any:
        try:
            return option.parse(raw)
        except SettingError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = option.metavar.lower()
    return convert


def absolute_path(value: Any, base: Path | None) -> Path:
    path = Path(str(value))
    try:
        path = path.expanduser()
    except RuntimeError:  # "~user" of an unknown user, or no home directory: keep the name as written
        pass
    if path.is_absolute():
        return path
    return (base if base is not None else Path.cwd()) / path


def _read_config(path: Path) -> str:
    """The text of the YAML file: it must be a readable, reasonably small UTF-8 file."""
    if not path.is_file():
        if path.is_dir():
            what = "is a directory"
        elif path.exists():  # a FIFO or a device: reading it could block or never end
            what = "is not a regular file"
        else:
            what = "does not exist"
        raise ConfigError(f"--consistency-config: {path} {what}; pass the path of a YAML file")
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(
            f"--consistency-config: cannot read {path} ({exc.strerror or exc}); pass the path of a readable YAML file"
        ) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{path}: larger than {MAX_CONFIG_BYTES} bytes; a consistency config is a few lines of YAML, "
            "so this is probably not the file you meant"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text; save it as UTF-8") from None


def _check_events(source: str, path: Path) -> None:
    """Refuse anchors, aliases and deep nesting from the parser's events, before any node or object exists.

    An alias makes a document a graph: ``a: &x [*x]`` is a cycle, and nine lines of nested aliases expand to
    gigabytes once anything walks or prints the value. Settings never need them, so any anchor is refused, in
    one linear pass. Deep nesting is refused here because composing it recurses once per level.
    """
    import yaml  # only when a configuration file is read: a tenth of the plugin's import time

    depth = 0
    for event in yaml.parse(source, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ConfigError(f"anchors and aliases (&x / *x) are not supported in {path}:{line}; write the value out")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_CONFIG_DEPTH:
                raise ConfigError(
                    f"{path}:{line}: nested more than {MAX_CONFIG_DEPTH} levels deep; settings are at most two "
                    "levels deep (e.g. gates: consistency_gap_max: 12)"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _node_kind(node: yaml.Node) -> str:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return "mapping"
    return "list" if isinstance(node, yaml.SequenceNode) else "scalar"


def load_yaml(path: Path) -> tuple[dict[tuple[str, ...], Any], dict[tuple[str, ...], int]]:
    """Flatten the YAML file to ``{key path: value}`` and ``{key path: line}``.

    Unknown keys, bad structure, keys given twice and values that cannot be read are usage errors that name the
    file and line. The document is composed to nodes and walked; only the values of known settings are
    constructed, so nothing is built for a key that is refused anyway.
    """
    import yaml  # only when a configuration file is read: a tenth of the plugin's import time

    source = _read_config(path)
    known = {option.yaml_path for option in OPTIONS if option.yaml_path}
    sections = {path_[:depth] for path_ in known for depth in range(1, len(path_))}  # routes, routes.anthropic
    flat: dict[tuple[str, ...], Any] = {}
    lines: dict[tuple[str, ...], int] = {}

    def construct(loader: yaml.SafeLoader, node: yaml.Node, where: str) -> Any:
        try:
            return loader.construct_object(node, deep=True)
        except (ValueError, OverflowError) as exc:  # e.g. an int of more than 4300 digits
            reason = str(exc).split(";")[0]
            raise ConfigError(f"{where}: {shown(node.value)} cannot be read ({reason})") from None

    def walk(loader: yaml.SafeLoader, node: yaml.MappingNode, prefix: tuple[str, ...]) -> None:
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConfigError(f"{path}:{line}: a key must be a name, not a {_node_kind(key_node)}")
            sub = (*prefix, str(key_node.value))
            dotted = ".".join(sub)
            if sub in lines:
                raise ConfigError(f"{path}:{line}: '{dotted}' is set twice (also on line {lines[sub]}); keep one")
            lines[sub] = line
            if sub in sections:
                if not isinstance(value_node, yaml.MappingNode):
                    raise ConfigError(f"{path}:{line}: '{dotted}' must be a mapping")
                walk(loader, value_node, sub)
            elif sub in known:
                flat[sub] = construct(loader, value_node, f"{path}:{line}: {dotted}")
            else:
                valid = sorted(".".join(p) for p in known)
                raise ConfigError(f"{path}:{line}: unknown setting '{dotted}'; valid settings: " + ", ".join(valid))

    try:
        _check_events(source, path)
        loader = yaml.SafeLoader(source)
        try:
            root = loader.get_single_node()
            if root is None or (isinstance(root, yaml.ScalarNode) and root.tag == "tag:yaml.org,2002:null"):
                return {}, lines
            if not isinstance(root, yaml.MappingNode):
                line = root.start_mark.line + 1
                kind = (
                    "list" if isinstance(root, yaml.SequenceNode) else type(construct(loader, root, str(path))).__name__
                )
                raise ConfigError(f"{path}:{line}: the top level must be a mapping of settings, not {kind}")
            walk(loader, root, ())
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        position = getattr(exc, "position", None)  # a ReaderError (a character YAML forbids) has no mark
        if mark is not None:
            where = f"{path}:{mark.line + 1}"
        elif isinstance(position, int):
            where = f"{path}:{source.count(chr(10), 0, position) + 1}"
        else:
            where = str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        if context and getattr(exc, "problem", None):
            problem = f"{context}, {problem}"
        raise ConfigError(f"{where}: malformed YAML ({problem}); fix the file or drop --consistency-config") from None
    return flat, lines
