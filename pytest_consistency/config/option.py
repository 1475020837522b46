"""One setting of the option table (:mod:`.options`): its flag, ini key, YAML path, parser and help, and the typed
attribute of ``Settings`` it is.

An option is declared once, as a class attribute of its group's class (``CoreOptions``, ``CostOptions``, ...):
``concurrency: Option[int | None] = Option("--consistency-concurrency", ...)``. The attribute's name is the name
code reads (``settings.concurrency``, learnt by :meth:`Option.__set_name__`); the annotation is its type, which mypy
reads through the descriptor's ``__get__``; the table (``options.OPTIONS``) is the groups' options in declaration
order, and ``Settings`` is the class that inherits every group. Apart from the table so that a group can be declared
in a module of its own (:mod:`.options_cost`) that the table imports, without importing the table back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

from pytest_consistency.analysis.gates import GATES
from pytest_consistency.config.parse import fraction, non_negative_int, percentage

#: What every ini key (and every ``dest`` but the gates' older ones) starts with: the option's ini key is this and its
#: attribute name.
PREFIX = "consistency_"

T = TypeVar("T")


class Option(Generic[T]):
    """A setting, declared once as a class attribute of its group: its command-line flag, YAML path, parser and
    help; read on a ``Settings`` instance, its value (of type ``T``). Read-only by convention (a plain class: the
    table is built at every pytest start, see :mod:`.options`)."""

    __slots__ = (
        "default",
        "dest",
        "flag",
        "help",
        "is_flag",
        "is_list",
        "metavar",
        "name",
        "negation",
        "parse",
        "yaml_path",
    )

    def __init__(
        self,
        flag: str,
        yaml_path: tuple[str, ...],
        parse: Callable[[Any], Any],
        help: str,
        default: Any = None,
        metavar: str = "VALUE",
        is_flag: bool = False,
        is_list: bool = False,
        negation: str | None = None,
        dest: str | None = None,
    ) -> None:
        #: The attribute's name (``concurrency``): set by :meth:`__set_name__` when the group's class is made.
        self.name = ""
        #: The argparse ``dest`` and the key of the gates' thresholds: ``consistency_<name>``, but for the gates
        #: named before every key had the prefix (``route_drift_max``), whose ``dest`` is their old ini key.
        self.dest = dest or ""
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

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        if not self.flag:  # declared by gate_option(): the rest is the gate's
            _fill_from_gate(self, owner, name)
        if not self.dest:
            self.dest = PREFIX + name

    @overload
    def __get__(self, instance: None, owner: type) -> Option[T]: ...

    @overload
    def __get__(self, instance: object, owner: type) -> T: ...

    def __get__(self, instance: object, owner: type) -> Any:
        """On the class, the option; on a settings object that was not given a value for it, the value it has when
        nothing sets it (a given value is in the instance's ``__dict__``, which Python reads first: this descriptor
        has no ``__set__``)."""
        return self if instance is None else self.unset

    def __repr__(self) -> str:
        return f"Option({self.name!r}, {self.flag!r})"

    @property
    def unset(self) -> Any:
        """The value when nothing sets the option: its default; a flag without a ``--no-`` twin is False."""
        if self.is_flag and self.negation is None:
            return self.default in (True, "true")
        return self.default

    @property
    def ini(self) -> str:
        return PREFIX + self.name

    @property
    def old_ini(self) -> str | None:
        """The ini key the option had before every key had the prefix (a gate's), still read with a deprecation
        warning; None for the others."""
        return None if self.dest.startswith(PREFIX) else self.dest

    @property
    def yaml_key(self) -> str:
        return ".".join(self.yaml_path)


def gate_option() -> Option[Any]:
    """A gate's option: its flag, help, metavar and parser are the gate's (:data:`~..analysis.gates.GATES`, where a
    gate is declared), found when the option learns its name, which is the gate's
    :attr:`~..analysis.gates.Gate.setting`; the declaration adds the type only. (A function, not a subclass: a class
    more is about 0.1 M instructions at every pytest start.)"""
    return Option("", (), percentage, "")


def _fill_from_gate(option: Option[Any], owner: type, name: str) -> None:
    gate = next((gate for gate in GATES if gate.setting == name), None)
    if gate is None:
        raise LookupError(f"{owner.__name__}.{name}: no gate of analysis.gates.GATES has the setting {name!r}")
    option.dest, option.flag, option.help, option.metavar = gate.dest, gate.flag, gate.help, gate.metavar
    option.yaml_path = ("gates", gate.dest)
    option.parse = non_negative_int if gate.count else fraction if gate.probability else percentage


def options_of(group: type) -> tuple[Option[Any], ...]:
    """The options a group's class declares, in declaration order."""
    return tuple(value for value in vars(group).values() if isinstance(value, Option))
