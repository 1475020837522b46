"""The YAML configuration file (``--consistency-config``, else ``consistency.yaml`` in rootdir): read, checked and
flattened to the option table's keys.

Its keys are the YAML keys of the option table (:mod:`.options`); the values are parsed later, by the option's
parser, like a value from anywhere else. ``yaml`` is imported only when a configuration file is read: it is a
tenth of the plugin's import time.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_consistency.config.marker import shown
from pytest_consistency.config.options import OPTIONS

if TYPE_CHECKING:
    import yaml

#: Largest YAML config file read; a settings file is a few lines, so a bigger one is the wrong file.
MAX_CONFIG_BYTES = 1_000_000
#: Deepest nesting of mappings and lists in the YAML config (the settings themselves use two levels).
MAX_CONFIG_DEPTH = 20


def _suggestion(key: tuple[str, ...], known: Iterable[tuple[str, ...]], sections: Iterable[tuple[str, ...]]) -> str:
    """What to write instead of an unknown key: the closest setting when one is close (a misspelling), else the
    settings beside it (the names valid at that level), never the whole list of every setting."""
    import difflib

    names = sorted({".".join(k) for k in (*known, *sections)})
    close = difflib.get_close_matches(".".join(key), names, n=1, cutoff=0.75)
    if close:
        return f"did you mean '{close[0]}'?"
    depth = len(key) - 1
    level = sorted({k[depth] for k in (*known, *sections) if len(k) > depth and k[:depth] == key[:depth]})
    where = f"in '{'.'.join(key[:-1])}'" if depth else "at the top level"
    return f"the settings {where} are " + ", ".join(level)


class ConfigError(ValueError):
    """The YAML config file cannot be used; the message names the file, the line and the fix."""


def _read_config(path: Path, origin: str) -> str:
    """The text of the YAML file: it must be a readable, reasonably small UTF-8 file."""
    if not path.is_file():
        if path.is_dir():
            what = "is a directory"
        elif path.exists():  # a FIFO or a device: reading it could block or never end
            what = "is not a regular file"
        else:
            what = "does not exist"
        raise ConfigError(f"{origin}: {path} {what}; pass the path of a YAML file")
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(
            f"{origin}: cannot read {path} ({exc.strerror or exc}); pass the path of a readable YAML file"
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


def load_yaml(path: Path, found_in: str | None = None) -> tuple[dict[tuple[str, ...], Any], dict[tuple[str, ...], int]]:
    """Flatten the YAML file to ``{key path: value}`` and ``{key path: line}``.

    Unknown keys, bad structure, keys given twice and values that cannot be read are usage errors that name the
    file and line. The document is composed to nodes and walked; only the values of known settings are
    constructed, so nothing is built for a key that is refused anyway. ``found_in`` is where a file no option named
    was found (``rootdir``, ``the current directory``), for the messages: none says to drop an option never given.
    """
    import yaml  # only when a configuration file is read: a tenth of the plugin's import time

    origin = "--consistency-config" if found_in is None else f"{path.name} in {found_in}"
    source = _read_config(path, origin)
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
                raise ConfigError(f"{path}:{line}: unknown setting '{dotted}'; {_suggestion(sub, known, sections)}")

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
        fix = (
            "fix the file or drop --consistency-config"
            if found_in is None
            else f"fix the file (read because it is in {found_in})"
        )
        raise ConfigError(f"{where}: malformed YAML ({problem}); {fix}") from None
    return flat, lines
