"""Every code block of README.md and docs/*.md is run (or skipped with a reason), one test item per block.

The convention an author follows is docs/contributing-docs.md; the parsing is tests/docs/blocks.py and the running
tests/docs/run.py. Items are ``PAGE:LINE-LANG``, so ``-k recipes`` runs one page's blocks. A block whose ``by=``
names a test file is run there instead, as written, with that file's deeper checks (the framework recipes' sessions
are their recording sessions): it is not run twice.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from docs.blocks import ROOT, Block, DirectiveError, page_blocks, pages
from docs.run import command_env, exported, run_commands, run_consistency_yaml, run_python, run_yaml, venv_bin
from fake_anthropic import GOOD_KEY as ANTHROPIC_KEY
from fake_openai import GOOD_KEY


def collected() -> tuple[list[Block], list[tuple[str, str]]]:
    blocks: list[Block] = []
    broken: list[tuple[str, str]] = []
    for page in pages():
        try:
            blocks += [b for b in page_blocks(page) if b.kind not in ("inert", "file")]
        except DirectiveError as exc:
            broken.append((str(page.relative_to(ROOT)), str(exc)))
    return blocks, broken


FOUND, BROKEN = collected()
BLOCKS = [b for b in FOUND if b.kind != "claimed"]
CLAIMED = [b for b in FOUND if b.kind == "claimed"]


def require_venv(block: Block) -> None:
    """A block whose commands run in another venv (``venv=``) skips without it, naming the README's command that
    creates it; in CI, where that command has run, it fails instead."""
    if (venv_bin(block) / "python").is_file():
        return
    venv = re.escape(block.options["venv"])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(rf"python3 -m venv {venv} && {venv}/bin/pip install (?:(?! &&)[^\n\\])+", readme)
    message = f"{block.id}: runs in {ROOT / block.options['venv']}, which does not exist"
    if found is None:
        pytest.fail(f"{message}, and no command of the README makes it")
    message += f"; create it from the repository's root with: {found.group(0).strip()}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.parametrize("page, error", BROKEN or [("", "")], ids=[p for p, _ in BROKEN] or ["none"])
def test_every_directive_is_readable(page: str, error: str) -> None:
    assert not error, error


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_block(block: Block, pytester: pytest.Pytester, request: pytest.FixtureRequest) -> None:
    kind = block.kind
    if kind == "skip":
        pytest.skip(f"{block.id}: {block.options['skip']}")
    if "venv" in block.options:
        require_venv(block)
    workdir: Path = pytester.path
    if kind == "python":
        run_python(block, workdir)
        return
    if kind == "yaml":
        run_yaml(block)
        return
    server = block.options.get("server")
    fake = claude = None
    if server in ("openai", "both"):
        fake = request.getfixturevalue("fake_server")
        fake.reset()
        fake.keys = {GOOD_KEY, GOOD_KEY + "-second"}  # a page may show key drift with a second key
    if server in ("anthropic", "both"):
        claude = request.getfixturevalue("anthropic_server")
        claude.reset()
        claude.keys = {ANTHROPIC_KEY}
    servers = exported(block, fake, claude)
    env = command_env(block, servers)
    if kind == "consistency-yaml":
        run_consistency_yaml(block, workdir, env)
    else:
        run_commands(block, workdir, env)


def test_every_block_left_to_a_test_file_is_asked_for_there() -> None:
    """A ``by=`` block is run by the file it names, which asks for its page's blocks by ``claimed(PAGE, ITSELF)``
    and checks there that it runs each of them; a file that no longer does would leave the block unrun."""
    assert CLAIMED, "no by= block: the recipes' sessions are run by tests/integration/docs/test_recipes.py"
    for block in CLAIMED:
        by = block.options["by"]
        path = ROOT / by
        assert path.is_file(), f"{block.id}: by={by}: no such test file"
        source = path.read_text(encoding="utf-8")
        assert f'claimed("{block.page}", "{by}")' in source, (
            f"{block.id}: {by} does not ask for the blocks of {block.page} left to it: claimed({block.page!r}, {by!r})"
        )


def test_every_page_has_blocks_that_run() -> None:
    """The collection is not silently empty (a lexer change that finds no fence would pass every page)."""
    assert any(b.page == "README.md" and b.kind != "skip" for b in BLOCKS)
    assert len({b.page for b in BLOCKS}) >= 5
