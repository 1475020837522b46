"""The code blocks of README.md and docs/*.md, classified by the docs convention (docs/contributing-docs.md).

Why: a README that is only read drifts (a loop over a folder that does not exist, a screenshot of an older suite).
Every fenced block in a runnable language is either run by ``tests/integration/docs/test_docs_blocks.py`` or
carries a skip reason, so a page cannot claim what the code no longer does. Sybil lexes the fences (nested in lists
and quotes too); this module reads the ``<!-- docs: ... -->`` directive before each block and ties each command
block to the files its session needs, so every block is one test item that runs alone (and so under xdist on any
worker).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from sybil import Document, Region
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

ROOT = Path(__file__).resolve().parent.parent.parent

#: Languages whose blocks are run; every other fence (text, json, toml, ...) is shown output or data.
PYTHON = ("python", "py")
YAML = ("yaml", "yml")
CONSOLE = ("console",)
SHELL = ("bash", "sh", "shell")
RUNNABLE = PYTHON + YAML + CONSOLE + SHELL

#: Keys a directive may carry; a flag has no value.
KEYS = {"skip", "file", "exit", "server", "env", "venv", "by"}
FLAGS = {"continue", "examples"}
SERVERS = ("openai", "anthropic", "both")
#: ``venv=``: one of the repository's own venvs, by its directory name (``.venv-openai2``), never a path elsewhere.
VENV = re.compile(r"\.venv(?:-[\w.]+)?")
#: ``by=``: the test file that runs the block as written and checks more than the runner does, by its path.
BY = re.compile(r"tests/(?:[\w]+/)*test_\w+\.py")

DIRECTIVE = re.compile(r"<!--\s*docs:(?P<body>.*?)-->", re.DOTALL)
LEXER = RawFencedCodeBlockLexer(
    info_pattern=re.compile(r"(?P<language>[\w+-]*)[^\n]*$\n", re.MULTILINE),
    mapping={"language": "language", "source": "source"},
)


class DirectiveError(ValueError):
    """A ``<!-- docs: ... -->`` comment that cannot be read, or that belongs to no block."""


@dataclass(frozen=True)
class Block:
    """One fenced block of a page, with what the convention says to do with it."""

    page: str  # relative to the repository root
    line: int  # of the opening fence, 1-based
    language: str
    source: str
    options: dict[str, str] = field(default_factory=dict)
    files: tuple[Block, ...] = ()  # a command block: the file blocks of its session
    chain: tuple[Block, ...] = ()  # a python block with `continue`: the page's python blocks before it

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}-{self.language or 'plain'}"

    @property
    def kind(self) -> str:
        if "skip" in self.options:
            return "skip"
        if "file" in self.options:
            return "file"
        if "by" in self.options:
            return "claimed"
        if self.language in PYTHON:
            return "python"
        if self.language in YAML:
            first = self.source.lstrip().splitlines()[0] if self.source.strip() else ""
            return "consistency-yaml" if first.startswith("# consistency.yaml") else "yaml"
        if self.language in CONSOLE:
            return "console"
        if self.language in SHELL:
            return "shell"
        return "inert"


def parse_directive(body: str, where: str) -> dict[str, str]:
    """``skip="why" file=test_x.py continue`` -> ``{"skip": "why", "file": "test_x.py", "continue": ""}``."""
    try:
        words = shlex.split(body)
    except ValueError as exc:
        raise DirectiveError(f"{where}: cannot read the directive <!-- docs:{body}-->: {exc}") from None
    options: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if key in FLAGS and not sep:
            options[key] = ""
        elif key in KEYS and sep:
            options[key] = value
        else:
            known = ", ".join([f"{k}=..." for k in sorted(KEYS)] + sorted(FLAGS))
            raise DirectiveError(f"{where}: unknown directive word {word!r} (known: {known})")
    if "skip" in options and not options["skip"].strip():
        raise DirectiveError(f'{where}: skip needs a reason: <!-- docs: skip="why this block is not run" -->')
    if options.get("server", "openai") not in SERVERS:
        raise DirectiveError(f"{where}: server={options['server']} is not one of {', '.join(SERVERS)}")
    if "venv" in options and not VENV.fullmatch(options["venv"]):
        raise DirectiveError(f"{where}: venv={options['venv']} is not a venv of the repository's root (.venv-NAME)")
    if "by" in options and not BY.fullmatch(options["by"]):
        raise DirectiveError(f"{where}: by={options['by']} is not a test file of the repository (tests/.../test_x.py)")
    if "exit" in options and not options["exit"].isdigit():
        raise DirectiveError(f"{where}: exit={options['exit']} is not an exit status")
    return options


def page_blocks(path: Path, root: Path = ROOT) -> list[Block]:
    """Every fenced block of the page, in order, with its directive and its session's files.

    A directive applies to the block right after it (blank lines between are allowed); one followed by prose, or
    by nothing, is an error, as is a ``file=`` block no command block of the page runs.
    """
    page = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    document = Document(path.read_text(encoding="utf-8"), str(path))
    text = document.text
    lexed: list[Region] = sorted(LEXER(document), key=lambda r: (r.start, -r.end))
    regions: list[Region] = []
    for region in lexed:  # a block shown inside a longer fence (````markdown) is part of that block
        if not regions or region.start >= regions[-1].end:
            regions.append(region)
    directives = [d for d in DIRECTIVE.finditer(text) if not any(r.start <= d.start() < r.end for r in regions)]
    used: set[int] = set()
    blocks: list[Block] = []
    pending_files: list[Block] = []
    python_so_far: list[Block] = []
    for region in regions:
        line = text.count("\n", 0, region.start) + 1
        options: dict[str, str] = {}
        before = text[: region.start].rstrip()
        for directive in directives:
            if directive.end() == len(before) and directive.start() not in used:
                where = f"{page}:{text.count(chr(10), 0, directive.start()) + 1}"
                options = parse_directive(directive.group("body"), where)
                used.add(directive.start())
        language = str(region.lexemes["language"]).lower()
        block = Block(page, line, language, str(region.lexemes["source"]), options)
        kind = block.kind
        if "by" in options and (kind != "claimed" or language not in CONSOLE + SHELL):
            raise DirectiveError(f"{page}:{line}: by= is for console and bash blocks (their test runs the commands)")
        if "venv" in options and kind not in ("console", "shell", "claimed", "skip"):
            where = f"{page}:{line}"
            raise DirectiveError(f"{where}: venv= is for console and bash blocks (their commands run in that venv)")
        if kind == "file":
            pending_files.append(block)
        elif kind in ("console", "shell", "claimed"):
            block = Block(page, line, language, block.source, options, files=tuple(pending_files))
            pending_files = []
        elif kind == "python":
            if "continue" in options:
                block = Block(page, line, language, block.source, options, chain=tuple(python_so_far))
            python_so_far.append(block)
        blocks.append(block)
    for directive in directives:
        if directive.start() not in used:
            where = f"{page}:{text.count(chr(10), 0, directive.start()) + 1}"
            raise DirectiveError(f"{where}: <!-- docs:{directive.group('body')}--> is not right before a code block")
    if pending_files:
        names = ", ".join(f"{b.options['file']} (line {b.line})" for b in pending_files)
        raise DirectiveError(f"{page}: file block(s) {names} are not followed by a console or bash block to run them")
    return blocks


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown page under docs/: a new page is run with no registration."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


# --- console blocks: commands and what they print ----------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    line: str
    expected: tuple[str, ...]


def console_commands(source: str) -> list[Command]:
    """``$ cmd`` lines, each with the output lines shown under it (up to the next ``$``)."""
    commands: list[Command] = []
    current: str | None = None
    shown: list[str] = []
    for raw in source.splitlines():
        if raw.startswith("$ "):
            if current is not None:
                commands.append(Command(current, tuple(shown)))
            current, shown = raw[2:].strip(), []
        elif current is not None:
            shown.append(raw)
        elif raw.strip():
            raise DirectiveError(f"output before the first '$ ' command: {raw!r}")
    if current is not None:
        commands.append(Command(current, tuple(shown)))
    return commands


TIMING = re.compile(r"\bin \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?")
LOOPBACK = re.compile(r"127\.0\.0\.1:\d+")


def normalised(line: str) -> str:
    """A line as compared: no surrounding ``=``/spaces, timings and loopback ports made constant."""
    line = line.strip().strip("=").strip()
    line = TIMING.sub("in Ns", line)
    return LOOPBACK.sub("127.0.0.1:PORT", line)


def output_mismatch(shown: tuple[str, ...], actual: list[str]) -> str | None:
    """None when the shown lines appear in ``actual`` in order; a line ``...`` stands for any lines.

    Shown lines not separated by ``...`` must be consecutive in the real output too (blank lines aside).
    """
    segments: list[list[str]] = [[]]
    for line in shown:
        if line.strip() in ("...", "…"):
            segments.append([])
        elif line.strip():
            segments[-1].append(normalised(line))
    real = [normalised(line) for line in actual if line.strip()]  # blank lines are layout, not output
    position = 0
    for segment in segments:
        if not segment:
            continue
        for start in range(position, len(real) - len(segment) + 1):
            if real[start : start + len(segment)] == segment:
                position = start + len(segment)
                break
        else:
            first = next((i for i, line in enumerate(real) if line == segment[0] and i >= position), None)
            if first is None:
                return f"shown line not in the output (after line {position}): {segment[0]!r}"
            for offset, want in enumerate(segment):
                got = real[first + offset] if first + offset < len(real) else "<end of output>"
                if got != want:
                    return f"shown lines differ from the output at {want!r}: the output has {got!r}"
            return f"shown lines not found in order: {segment!r}"
    return None
