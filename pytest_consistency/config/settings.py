"""The plugin's settings in a pytest session: options on the command line, the ini file and the YAML file.

The table of options and their parsers live in :mod:`.options` (no pytest needed, so the ``pytest-consistency``
command reads the same YAML and gates), registered with pytest by ``plugin.dormant.add_options``; this module applies
the precedence CLI > YAML > ini > default, turning every invalid value into a usage error that names where it came
from. Only a session the plugin wakes for builds :class:`Settings` (``plugin.dormant``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from pytest_consistency.config.option import Option
from pytest_consistency.config.options import BY_DEST, CONFIG_FILE, OPTIONS
from pytest_consistency.config.parse import SettingError, absolute_path
from pytest_consistency.config.parse import Target as ResampleTarget

if TYPE_CHECKING:  # the option table is read at start-up: no statistics (model.result) loaded for it
    from pytest_consistency.model.result import GateOn, Target


@dataclass(frozen=True, eq=False)
class Settings:
    """Every option's value, one typed attribute per option (named as its ``dest`` in the option table, which a
    test checks), after the precedence CLI > YAML > ini > default; and where each came from.

    Compared by identity (``eq=False``): a session has one, and nothing compares two. Every pytest start with the
    plugin installed builds this class, and the ``__eq__`` and ``__hash__`` that ``dataclasses`` would compile
    for 57 fields cost about 1.1 ms of that start (issue 30)."""

    consistency_config: str = CONFIG_FILE
    consistency_repeat: int | None = None
    consistency_min_pass: float | None = None
    consistency_min_rate: float | None = None
    consistency_shard: tuple[int, int] | None = None
    consistency_report: str | None = None
    consistency_md: str | None = None
    consistency_no_md: bool = False
    consistency_html: str | None = None
    consistency_output: str | None = None
    consistency_gap_max: float | None = None
    answer_disagreement_max: float | None = None
    pass_hat_k_min: float | None = None
    route_drift_max: float | None = None
    consistency_regressions_max: int | None = None
    gap_increase_max: float | None = None
    judge_flip_max: float | None = None
    mcnemar_p_min: float | None = None
    consistency_cause_max: tuple[tuple[str, float], ...] = ()
    consistency_confidence: float = 0.95
    consistency_interval_target: Target = "suite"
    consistency_gate_on: GateOn = "bound"
    consistency_inconclusive: Literal["fail", "pass"] = "pass"
    consistency_baseline: str | None = None
    consistency_test: Literal["boschloo", "fisher"] = "boschloo"
    consistency_suite_regression: bool | None = None
    consistency_adaptive: bool = False
    consistency_n_min: int = 1
    consistency_sequential: bool = False
    consistency_sequential_alpha: float | None = None
    consistency_repetition_budget: int | None = None
    consistency_sequential_margin: float | None = None
    consistency_base_url: str | None = None
    consistency_model: str | None = None
    consistency_api_key_env: str = "OPENAI_API_KEY"
    consistency_timeout: float = 60.0
    consistency_max_retries: int = 1
    consistency_temperature: float | None = None
    consistency_max_tokens: int | None = None
    consistency_seed: int | None = None
    consistency_retries_max: int | None = None
    consistency_token_budget: int | None = None
    consistency_preflight: bool | None = None
    consistency_concurrency: int | None = None
    consistency_rpm: int | None = None
    consistency_anthropic_base_url: str | None = None
    consistency_anthropic_model: str | None = None
    consistency_anthropic_key_env: str | None = None
    consistency_same_gateway: bool = False
    consistency_ignore_url: str | None = None
    #: The judge's route settings over the agent route's, ``(name, value)``: base_url, model, api_key_env, temperature.
    consistency_judge: tuple[tuple[str, Any], ...] = ()
    #: ``(model, Price)`` pairs (``model.prices.Price``: input, output, cached input, cache write per million tokens).
    consistency_prices: tuple[tuple[str, tuple[float, float, float, float | None]], ...] = ()
    consistency_cost_budget: float | None = None
    consistency_plan: bool = False
    consistency_cassettes: str = "cassettes"
    consistency_cassette_format: Literal["yaml", "json"] = "yaml"
    consistency_record: Literal["none", "once", "new_episodes", "all", "off"] = "none"
    consistency_match_ignore: tuple[str, ...] = ()
    consistency_record_on_exception: bool = False
    consistency_replay_any_host: bool = False
    consistency_resample: ResampleTarget | None = None
    consistency_resample_n: int = 10
    consistency_resample_from: int = 1
    consistency_rejudge: int | None = None
    consistency_judge_votes: int | None = None
    consistency_rejudge_role: Literal["judge", "agent"] = "judge"
    consistency_otel: bool = False
    consistency_otel_content: bool = False
    consistency_run_id: str | None = None
    #: Per option, where its value came from (``--flag``, the YAML file and key, the ini file, ``default``).
    sources: dict[str, str] = field(default_factory=dict, compare=False)
    #: The YAML file read: the one ``consistency_config`` names, or ``consistency.yaml`` in rootdir; None if none was.
    config_file: Path | None = None
    #: Per option, the directory a relative path value is relative to (see :meth:`path`).
    bases: dict[str, Path] = field(default_factory=dict, compare=False)

    def value(self, dest: str) -> Any:
        """The value of the option ``dest`` where the option is chosen from a table (the gates)."""
        if dest not in _OPTION_FIELDS:
            raise KeyError(f"no option with dest {dest!r}")
        return getattr(self, dest)

    def path(self, dest: str) -> Path | None:
        """The value of a file or directory option as an absolute path; None when the option is not set.

        ``~`` is expanded. A relative value is relative to where it was given: the invocation directory for the
        command line (and ``-o``), the ini file's directory for the ini file, the YAML file's directory for the
        YAML file, and rootdir for the default.
        """
        value = self.value(dest)
        if value is None:
            return None
        return absolute_path(value, self.bases.get(dest))


#: The attributes of :class:`Settings` that are options (the rest say where the values came from).
_OPTION_FIELDS = frozenset(f.name for f in fields(Settings)) - {"sources", "config_file", "bases"}


def _overridden_ini(config: pytest.Config) -> set[str]:
    """Ini keys set on the command line with ``-o key=value``."""
    entries = config.getoption("override_ini", None) or []
    return {str(entry).split("=", 1)[0].strip() for entry in entries if "=" in str(entry)}


def resolve(config: pytest.Config) -> Settings:
    """Apply precedence CLI > YAML > ini > default, validating each value where it came from.

    Also records, per option, the directory a relative path is relative to (:meth:`Settings.path`).
    """
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    bases: dict[str, Path] = {}
    inifile = str(config.inipath) if config.inipath else "ini file"
    invocation_dir = Path(config.invocation_params.dir)
    ini_dir = config.inipath.parent if config.inipath else config.rootpath
    overridden = _overridden_ini(config)
    config_path: Path | None = None
    yaml_values: dict[tuple[str, ...], Any] = {}
    yaml_lines: dict[tuple[str, ...], int] = {}

    def pick(option: Option) -> None:
        cli = config.getoption(option.dest)
        if cli is not None and option.is_list:  # one parsed tuple per occurrence
            cli = tuple(rule for rules in cli for rule in rules)
        if cli is not None:
            values[option.dest] = cli
            sources[option.dest] = option.flag
            bases[option.dest] = invocation_dir
            return
        if option.yaml_path in yaml_values and config_path is not None:
            raw = yaml_values[option.yaml_path]
            where = f"{config_path}:{yaml_lines.get(option.yaml_path, 1)}"
            if option.is_flag:
                raw = str(raw).lower() if isinstance(raw, bool) else raw
            try:
                values[option.dest] = option.parse(raw)
            except SettingError as exc:
                raise pytest.UsageError(f"{where}: {option.yaml_key}: {exc} (see {option.flag} in --help)") from None
            sources[option.dest] = f"{config_path} ({option.yaml_key})"
            bases[option.dest] = config_path.parent
            return
        raw = config.getini(option.ini)
        if raw not in (None, ""):
            from_cli = option.ini in overridden
            origin = f"-o {option.ini}" if from_cli else inifile
            try:
                values[option.dest] = option.parse(raw)
            except SettingError as exc:
                raise pytest.UsageError(f"{origin}: {option.ini} = {raw}: {exc} (twin of {option.flag})") from None
            sources[option.dest] = f"-o {option.ini}" if from_cli else f"{inifile} ({option.ini})"
            bases[option.dest] = invocation_dir if from_cli else ini_dir
            return
        values[option.dest] = option.default
        sources[option.dest] = "default"
        bases[option.dest] = config.rootpath

    pick(BY_DEST["consistency_config"])
    config_path = absolute_path(values["consistency_config"], bases["consistency_config"])
    if sources["consistency_config"] == "default" and not config_path.is_file():
        config_path = None  # no file named, none in rootdir: one stat, and nothing else is loaded
    if config_path is not None:
        from pytest_consistency.config.yaml import ConfigError, load_yaml  # only for a session with a file

        try:
            yaml_values, yaml_lines = load_yaml(
                config_path, None if sources["consistency_config"] != "default" else "rootdir"
            )
        except ConfigError as exc:
            raise pytest.UsageError(str(exc)) from None
    for option in OPTIONS:
        pick(option)
    for option in OPTIONS:
        if option.is_flag and not (option.negation is not None and values[option.dest] is None):
            values[option.dest] = values[option.dest] in (True, "true")
    return Settings(**values, sources=sources, config_file=config_path, bases=bases)
