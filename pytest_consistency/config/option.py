"""One setting of the option table (:mod:`.options`): its flag, ini key, YAML path, parser and help.

Apart from the table so that a group of options can be declared in a module of its own (:mod:`.options_cost`) that
the table imports, without importing the table back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Option:
    """A setting, declared once: its command-line flag, YAML path, parser and help. Read-only by convention (a plain
    class: see the module docstring)."""

    __slots__ = ("default", "dest", "flag", "help", "is_flag", "is_list", "metavar", "negation", "parse", "yaml_path")

    def __init__(
        self,
        dest: str,
        flag: str,
        yaml_path: tuple[str, ...],
        parse: Callable[[Any], Any],
        help: str,
        default: Any = None,
        metavar: str = "VALUE",
        is_flag: bool = False,
        is_list: bool = False,
        negation: str | None = None,
    ) -> None:
        self.dest = dest
        self.flag = flag
        self.yaml_path = yaml_path
        self.parse = parse
        self.help = help
        self.default = default
        self.metavar = metavar
        self.is_flag = is_flag
        #: Given several times on the command line (each adds), a YAML list, or one value per line in the ini file.
        self.is_list = is_list
        #: A flag that can be switched off on the command line too (``--no-...``); unset, it stays None (its default
        #: depends on the session: the suite-level test is on whenever a baseline is given).
        self.negation = negation

    def __repr__(self) -> str:
        return f"Option({self.dest!r}, {self.flag!r})"

    @property
    def ini(self) -> str:
        return self.dest

    @property
    def yaml_key(self) -> str:
        return ".".join(self.yaml_path)
