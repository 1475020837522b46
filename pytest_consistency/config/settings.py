"""The plugin's settings in a pytest session: options on the command line, the ini file and the YAML file.

The table of options and their parsers live in :mod:`.options` (no pytest needed, so the ``pytest-consistency``
command reads the same YAML and gates), registered with pytest by ``plugin.dormant.add_options``; this module applies
the precedence CLI > YAML > ini > default, turning every invalid value into a usage error that names where it came
from. Only a session the plugin wakes for builds :class:`Settings` (``plugin.dormant``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import pytest

from pytest_consistency.config.option import Option
from pytest_consistency.config.options import BY_NAME, OPTIONS, CoreOptions, Options
from pytest_consistency.config.parse import SettingError, absolute_path


class Settings(Options):
    """Every option's value after the precedence CLI > YAML > ini > default, and where each came from.

    One attribute per option, inherited from the option groups of the table (:mod:`.options`), where each option is
    declared once with its type: ``settings.concurrency`` is an ``int | None``. A value given is kept in the
    instance's ``__dict__``; an option not given reads as its default (``Option.__get__``). Frozen, and compared by
    identity: a session has one, and nothing compares two. Built only by a session the plugin wakes for."""

    #: Per option (by name), where its value came from (``--flag``, the YAML file and key, the ini file, ``default``).
    sources: dict[str, str]
    #: The YAML file read: the one ``--consistency-config`` names, or ``consistency.yaml`` in rootdir; None if none was.
    config_file: Path | None
    #: Per option (by name), the directory a relative path value is relative to (see :meth:`path`).
    bases: dict[str, Path]

    def __init__(
        self,
        *,
        sources: dict[str, str] | None = None,
        config_file: Path | None = None,
        bases: dict[str, Path] | None = None,
        **values: Any,
    ) -> None:
        unknown = sorted(set(values) - BY_NAME.keys())
        if unknown:
            raise TypeError(f"Settings() got unexpected option names: {', '.join(unknown)}")
        self.__dict__.update(values, sources=sources or {}, config_file=config_file, bases=bases or {})

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        given = ", ".join(f"{name}={value!r}" for name, value in vars(self).items() if name in BY_NAME)
        return f"Settings({given})"

    def value(self, name: str) -> Any:
        """The value of the option ``name`` where the option is chosen from a table (the gates)."""
        if name not in BY_NAME:
            raise KeyError(f"no option named {name!r}")
        return getattr(self, name)

    def path(self, name: str) -> Path | None:
        """The value of a file or directory option as an absolute path; None when the option is not set.

        ``~`` is expanded. A relative value is relative to where it was given: the invocation directory for the
        command line (and ``-o``), the ini file's directory for the ini file, the YAML file's directory for the
        YAML file, and rootdir for the default.
        """
        value = self.value(name)
        if value is None:
            return None
        return absolute_path(value, self.bases.get(name))


class ConsistencyDeprecationWarning(pytest.PytestDeprecationWarning):
    """Something the plugin still accepts but will not: an ini key without the ``consistency_`` prefix."""


def ini_entry(option: Option[Any], read: Callable[[str], Any]) -> tuple[str, Any, str | None]:
    """The ini key an option's value is read from, the raw value (``read(key)``, pytest's ``getini``), and the
    deprecation to warn of (None: none). A gate's key without the prefix (``route_drift_max``) is still read when
    its new key (``consistency_route_drift_max``) is not set; both set, the new one wins, and the warning says so."""
    raw = read(option.ini)
    old = option.old_ini
    if old is None:
        return option.ini, raw, None
    old_raw = read(old)
    if old_raw in (None, ""):
        return option.ini, raw, None
    if raw in (None, ""):
        return old, old_raw, f"the ini key {old} is deprecated: use {option.ini}"
    return (
        option.ini,
        raw,
        f"the ini keys {option.ini} and {old} are both set: {option.ini} wins ({old} is its deprecated spelling: "
        "remove it)",
    )


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

    def pick(option: Option[Any]) -> None:
        cli = config.getoption(option.dest)
        if cli is not None and option.is_list:  # one parsed tuple per occurrence
            cli = tuple(rule for rules in cli for rule in rules)
        if cli is not None:
            values[option.name] = cli
            sources[option.name] = option.flag
            bases[option.name] = invocation_dir
            return
        if option.yaml_path in yaml_values and config_path is not None:
            raw = yaml_values[option.yaml_path]
            where = f"{config_path}:{yaml_lines.get(option.yaml_path, 1)}"
            if option.is_flag:
                raw = str(raw).lower() if isinstance(raw, bool) else raw
            try:
                values[option.name] = option.parse(raw)
            except SettingError as exc:
                raise pytest.UsageError(f"{where}: {option.yaml_key}: {exc} (see {option.flag} in --help)") from None
            sources[option.name] = f"{config_path} ({option.yaml_key})"
            bases[option.name] = config_path.parent
            return
        key, raw, deprecation = ini_entry(option, config.getini)
        if deprecation is not None and not hasattr(config, "workerinput"):  # said once, by the controller
            config.issue_config_time_warning(ConsistencyDeprecationWarning(deprecation), stacklevel=2)
        if raw not in (None, ""):
            from_cli = key in overridden
            origin = f"-o {key}" if from_cli else inifile
            try:
                values[option.name] = option.parse(raw)
            except SettingError as exc:
                raise pytest.UsageError(f"{origin}: {key} = {raw}: {exc} (twin of {option.flag})") from None
            sources[option.name] = f"-o {key}" if from_cli else f"{inifile} ({key})"
            bases[option.name] = invocation_dir if from_cli else ini_dir
            return
        values[option.name] = option.default
        sources[option.name] = "default"
        bases[option.name] = config.rootpath

    pick(CoreOptions.config)
    config_path = absolute_path(values["config"], bases["config"])
    if sources["config"] == "default" and not config_path.is_file():
        config_path = None  # no file named, none in rootdir: one stat, and nothing else is loaded
    if config_path is not None:
        from pytest_consistency.config.yaml import ConfigError, load_yaml  # only for a session with a file

        try:
            yaml_values, yaml_lines = load_yaml(config_path, None if sources["config"] != "default" else "rootdir")
        except ConfigError as exc:
            raise pytest.UsageError(str(exc)) from None
    for option in OPTIONS:
        pick(option)
    for option in OPTIONS:
        if option.is_flag and not (option.negation is not None and values[option.name] is None):
            values[option.name] = values[option.name] in (True, "true")
    return Settings(**values, sources=sources, config_file=config_path, bases=bases)
