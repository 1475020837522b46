"""Every option of the plugin, declared once, with its command-line flag, ini key and YAML key.

One table drives ``pytest_addoption``, the ini and YAML parsing and the precedence CLI > YAML > ini > default,
so an option cannot exist in one place and be forgotten in another. Values are validated by the same function
wherever they come from, and an invalid one is a usage error naming where it came from.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml


class SettingError(ValueError):
    pass


def positive_int(raw: Any) -> int:
    if isinstance(raw, bool):
        raise SettingError(f"{raw!r} is not a whole number")
    try:
        value = int(str(raw).strip()) if not isinstance(raw, int) else raw
    except ValueError:
        raise SettingError(f"{raw!r} is not a whole number") from None
    if value < 1:
        raise SettingError(f"{raw!r} must be at least 1")
    return value


def non_negative_int(raw: Any) -> int:
    if raw in (0, "0"):
        return 0
    return positive_int(raw)


def _number(raw: Any) -> float:
    if isinstance(raw, bool):
        raise SettingError(f"{raw!r} is not a number")
    try:
        value = float(str(raw).strip()) if not isinstance(raw, (int, float)) else float(raw)
    except ValueError:
        raise SettingError(f"{raw!r} is not a number") from None
    if not math.isfinite(value):
        raise SettingError(f"{raw!r} is not a finite number")
    return value


def percentage(raw: Any) -> float:
    value = _number(raw)
    if not 0.0 <= value <= 100.0:
        raise SettingError(f"{raw!r} must be within 0..100 (percentage points)")
    return value


def fraction(raw: Any) -> float:
    value = _number(raw)
    if not 0.0 <= value <= 1.0:
        raise SettingError(f"{raw!r} must be within 0..1")
    return value


def positive_number(raw: Any) -> float:
    value = _number(raw)
    if value <= 0:
        raise SettingError(f"{raw!r} must be greater than 0")
    return value


def non_negative_number(raw: Any) -> float:
    value = _number(raw)
    if value < 0:
        raise SettingError(f"{raw!r} must not be negative")
    return value


def text(raw: Any) -> str:
    if not isinstance(raw, (str, int, float)) or isinstance(raw, bool) or str(raw).strip() == "":
        raise SettingError(f"{raw!r} is not a non-empty string")
    return str(raw).strip()


def choice(*allowed: str) -> Callable[[Any], str]:
    def parse(raw: Any) -> str:
        value = str(raw).strip().lower()
        if value not in allowed:
            raise SettingError(f"{raw!r} is not one of {', '.join(allowed)}")
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

    @property
    def ini(self) -> str:
        return self.dest

    @property
    def yaml_key(self) -> str:
        return ".".join(self.yaml_path)


GATE_OPTIONS = (
    Option(
        "consistency_gap_max",
        "--consistency-gap-max",
        ("gates", "consistency_gap_max"),
        percentage,
        "fail the session when the consistency gap (Mean@k - pass^k) exceeds PP percentage points",
        metavar="PP",
    ),
    Option(
        "answer_disagreement_max",
        "--answer-disagreement-max",
        ("gates", "answer_disagreement_max"),
        percentage,
        "fail the session when the share of tasks with disagreeing answers exceeds PP percentage points",
        metavar="PP",
    ),
    Option(
        "pass_hat_k_min",
        "--pass-hat-k-min",
        ("gates", "pass_hat_k_min"),
        percentage,
        "fail the session when pass^k falls below PCT percent",
        metavar="PCT",
    ),
    Option(
        "route_drift_max",
        "--route-drift-max",
        ("gates", "route_drift_max"),
        percentage,
        "fail the session when the share of tasks whose repetitions did not share one route exceeds PP "
        "percentage points (0 is the usual CI value)",
        metavar="PP",
    ),
)

CORE_OPTIONS = (
    Option(
        "consistency_config",
        "--consistency-config",
        (),
        text,
        "YAML file with consistency settings (gates, repeat, route, cassettes); CLI options override it",
        metavar="FILE",
    ),
    Option(
        "consistency_repeat",
        "--consistency-repeat",
        ("repeat",),
        positive_int,
        "override n of every repeat_consistency marker",
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
        "consistency_report",
        "--consistency-report",
        ("report",),
        text,
        "write the machine-readable JSON report to FILE",
        metavar="FILE",
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
        positive_number,
        "request timeout in seconds (default 60)",
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
)

CASSETTE_OPTIONS = (
    Option(
        "consistency_cassettes",
        "--consistency-cassettes",
        ("cassettes", "dir"),
        text,
        "directory of the per-repetition cassettes, relative to rootdir (default: cassettes)",
        metavar="DIR",
        default="cassettes",
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
        "consistency_record_on_exception",
        "--consistency-record-on-exception",
        ("cassettes", "record_on_exception"),
        choice("true", "false"),
        "keep the cassette of a repetition that raised something other than an assertion (default: drop it)",
        is_flag=True,
    ),
)

OPTIONS = CORE_OPTIONS + GATE_OPTIONS + ROUTE_OPTIONS + CASSETTE_OPTIONS
BY_DEST = {option.dest: option for option in OPTIONS}


def _cli_type(option: Option) -> Callable[[str], Any]:
    def convert(raw: str) -> Any:
        try:
            return option.parse(raw)
        except SettingError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = option.metavar.lower()
    return convert


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("consistency", "repeated-task consistency (pytest-consistency)")
    for option in OPTIONS:
        if option.is_flag:
            group.addoption(
                option.flag,
                action="store_const",
                const=True,
                dest=option.dest,
                default=None,
                help=option.help,
            )
        else:
            group.addoption(
                option.flag,
                dest=option.dest,
                default=None,
                type=_cli_type(option),
                metavar=option.metavar,
                help=option.help,
            )
        parser.addini(option.ini, f"{option.help} (twin of {option.flag})", type="string", default=None)


@dataclass
class Settings:
    values: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)
    config_file: Path | None = None

    def __getitem__(self, dest: str) -> Any:
        return self.values.get(dest)


def _yaml_lines(text_: str) -> dict[tuple[str, ...], int]:
    """Line of every mapping key, so errors in the YAML file point at the line."""
    lines: dict[tuple[str, ...], int] = {}

    def walk(node: yaml.Node, path: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                sub = (*path, str(key.value))
                lines[sub] = key.start_mark.line + 1
                walk(value, sub)

    root = yaml.compose(text_, Loader=yaml.SafeLoader)
    if root is not None:
        walk(root, ())
    return lines


def load_yaml(path: Path) -> tuple[dict[tuple[str, ...], Any], dict[tuple[str, ...], int]]:
    """Flatten the YAML file to ``{key path: value}``; unknown keys and bad structure are usage errors."""
    if not path.is_file():
        raise pytest.UsageError(f"--consistency-config: {path} does not exist; pass the path of a YAML file")
    source = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(source)
        lines = _yaml_lines(source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise pytest.UsageError(
            f"{where}: malformed YAML ({problem}); fix the file or drop --consistency-config"
        ) from None
    if data is None:
        return {}, lines
    if not isinstance(data, dict):
        raise pytest.UsageError(f"{path}:1: the top level must be a mapping of settings, not {type(data).__name__}")
    known = {option.yaml_path for option in OPTIONS if option.yaml_path}
    sections = {path_[:1] for path_ in known if len(path_) > 1}
    flat: dict[tuple[str, ...], Any] = {}

    def walk(node: dict[Any, Any], prefix: tuple[str, ...]) -> None:
        for key, value in node.items():
            sub = (*prefix, str(key))
            if sub in sections:
                if not isinstance(value, dict):
                    raise pytest.UsageError(f"{path}:{lines.get(sub, 1)}: '{'.'.join(sub)}' must be a mapping")
                walk(value, sub)
            elif sub in known:
                flat[sub] = value
            else:
                valid = sorted(".".join(p) for p in known)
                raise pytest.UsageError(
                    f"{path}:{lines.get(sub, 1)}: unknown setting '{'.'.join(sub)}'; valid settings: "
                    + ", ".join(valid)
                )

    walk(data, ())
    return flat, lines


def resolve(config: pytest.Config) -> Settings:
    """Apply precedence CLI > YAML > ini > default, validating each value where it came from."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    inifile = str(config.inipath) if config.inipath else "ini file"

    def ini_value(option: Option) -> Any:
        raw = config.getini(option.ini)
        return None if raw in (None, "") else raw

    config_path: Path | None = None
    raw_config = config.getoption("consistency_config") or ini_value(BY_DEST["consistency_config"])
    yaml_values: dict[tuple[str, ...], Any] = {}
    yaml_lines: dict[tuple[str, ...], int] = {}
    if raw_config:
        config_path = Path(str(raw_config))
        if not config_path.is_absolute():
            config_path = Path(config.invocation_params.dir) / config_path
        yaml_values, yaml_lines = load_yaml(config_path)

    for option in OPTIONS:
        cli = config.getoption(option.dest)
        if cli is not None:
            values[option.dest] = cli
            sources[option.dest] = option.flag
            continue
        if option.yaml_path in yaml_values:
            raw = yaml_values[option.yaml_path]
            where = f"{config_path}:{yaml_lines.get(option.yaml_path, 1)}"
            if option.is_flag:
                raw = str(raw).lower() if isinstance(raw, bool) else raw
            try:
                values[option.dest] = option.parse(raw)
            except SettingError as exc:
                raise pytest.UsageError(f"{where}: {option.yaml_key}: {exc} (see {option.flag} in --help)") from None
            sources[option.dest] = f"{config_path} ({option.yaml_key})"
            continue
        raw = ini_value(option)
        if raw is not None:
            try:
                values[option.dest] = option.parse(raw)
            except SettingError as exc:
                raise pytest.UsageError(f"{inifile}: {option.ini} = {raw}: {exc} (twin of {option.flag})") from None
            sources[option.dest] = f"{inifile} ({option.ini})"
            continue
        values[option.dest] = option.default
        sources[option.dest] = "default"
    for option in OPTIONS:
        if option.is_flag:
            values[option.dest] = values[option.dest] in (True, "true")
    return Settings(values=values, sources=sources, config_file=config_path)
