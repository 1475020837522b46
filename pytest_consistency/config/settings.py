"""The plugin's settings in a pytest session: options on the command line, the ini file and the YAML file.

The table of options and their parsers live in :mod:`.options` (no pytest needed, so the ``pytest-consistency``
command reads the same YAML and gates); this module registers them with pytest and applies the precedence
CLI > YAML > ini > default, turning every invalid value into a usage error that names where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.config.options import BY_DEST, OPTIONS, Option, argparse_type
from pytest_consistency.config.parse import SettingError, absolute_path
from pytest_consistency.config.yaml import ConfigError, load_yaml


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("consistency", "repeated-task consistency (pytest-consistency)")
    for option in OPTIONS:
        if option.is_list:
            group.addoption(
                option.flag,
                action="append",
                dest=option.dest,
                default=None,
                type=argparse_type(option),
                metavar=option.metavar,
                help=option.help,
            )
        elif option.is_flag:
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
                type=argparse_type(option),
                metavar=option.metavar,
                help=option.help,
            )
        parser.addini(option.ini, f"{option.help} (twin of {option.flag})", type="string", default=None)


@dataclass
class Settings:
    values: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)
    config_file: Path | None = None
    #: Per option, the directory a relative path value is relative to (see :meth:`path`).
    bases: dict[str, Path] = field(default_factory=dict)

    def __getitem__(self, dest: str) -> Any:
        return self.values.get(dest)

    def path(self, dest: str) -> Path | None:
        """The value of a file or directory option as an absolute path; None when the option is not set.

        ``~`` is expanded. A relative value is relative to where it was given: the invocation directory for the
        command line (and ``-o``), the ini file's directory for the ini file, the YAML file's directory for the
        YAML file, and rootdir for the default.
        """
        value = self.values.get(dest)
        if value is None:
            return None
        return absolute_path(value, self.bases.get(dest))


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
    if values["consistency_config"] is not None:
        config_path = absolute_path(values["consistency_config"], bases["consistency_config"])
        try:
            yaml_values, yaml_lines = load_yaml(config_path)
        except ConfigError as exc:
            raise pytest.UsageError(str(exc)) from None
    for option in OPTIONS:
        pick(option)
    for option in OPTIONS:
        if option.is_flag:
            values[option.dest] = values[option.dest] in (True, "true")
    return Settings(values=values, sources=sources, config_file=config_path, bases=bases)
