"""Running one block of a page as the docs convention says (docs/contributing-docs.md).

Why each kind runs as it does: python is exec'd alone, so a block works when copied on its own; a consistency.yaml
sample goes through the plugin's own settings loader in a real pytest session, so a misspelt key fails; commands run
as a user would type them, in a fresh directory holding exactly the files the page shows, so a command over a
folder the page never creates fails the way it would fail for the reader.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import forkserver
import inner
import yaml
from fake_anthropic import GOOD_KEY as ANTHROPIC_KEY
from fake_openai import GOOD_KEY

from .blocks import ROOT, SHELL, Block, Command, console_commands, output_mismatch, page_blocks

#: The venv the tests run in: its ``pytest``, ``pytest-consistency`` and ``python`` are the ones a page's commands get.
BIN = Path(sys.executable).parent

#: Variables of the developer's shell that would change what a page's command does.
DROPPED = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "EXAMPLE_LLM_KEY",
    "EXAMPLE_GATEWAY_KEY",
    "GITHUB_STEP_SUMMARY",
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
    "PYTEST_CURRENT_TEST",
)

TIMEOUT = 600


class BlockFailed(AssertionError):
    """A block did not do what its page says."""


def run_python(block: Block, workdir: Path) -> None:
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    previous = Path.cwd()
    os.chdir(workdir)
    try:
        for part in (*block.chain, block):
            exec(compile(part.source, f"{part.page}:{part.line}", "exec"), namespace)
    finally:
        os.chdir(previous)


def run_yaml(block: Block) -> None:
    try:
        yaml.safe_load(block.source)
    except yaml.YAMLError as exc:
        raise BlockFailed(f"{block.id}: not valid YAML: {exc}") from None


def run_consistency_yaml(block: Block, workdir: Path, env: dict[str, str]) -> None:
    """Through the plugin's loader: an inner session that only reads its settings (no test to collect)."""
    (workdir / "consistency.yaml").write_text(block.source, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "--consistency-config=consistency.yaml"]
    result = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    if result.returncode != 5:  # 5: no tests collected, the settings were read
        output = (result.stdout + result.stderr)[-3000:]
        raise BlockFailed(f"{block.id}: the plugin refused this consistency.yaml (exit {result.returncode}):\n{output}")


def write_files(block: Block, workdir: Path) -> None:
    for file in block.files:
        target = workdir / file.options["file"]
        if not target.resolve().is_relative_to(workdir.resolve()):
            raise BlockFailed(f"{file.id}: file={file.options['file']} is outside the session directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(file.source, encoding="utf-8")


def copy_examples(workdir: Path) -> None:
    """The example suite as a clone has it: examples/, its cassettes, scripts/ and the copyable conftest."""
    ignore = shutil.ignore_patterns("__pycache__", "consistency-report*", "consistency-summary.md")
    shutil.copytree(ROOT / "examples", workdir / "examples", ignore=ignore)
    shutil.copytree(ROOT / "cassettes", workdir / "cassettes", ignore=ignore)
    shutil.copytree(ROOT / "scripts", workdir / "scripts", ignore=ignore)
    shutil.copy(ROOT / "conftest_example.py", workdir)


def venv_bin(block: Block) -> Path:
    """Where the block's ``pytest`` and ``python`` come from: the test venv, or the one its ``venv=`` names."""
    return ROOT / block.options["venv"] / "bin" if "venv" in block.options else BIN


def exported(block: Block, openai: Any, anthropic: Any) -> dict[str, Any]:
    """The loopback servers the block's ``server=`` asks for, with the good key of each, as ``command_env`` takes
    them (``openai``, ``anthropic``: the running fakes)."""
    server = block.options.get("server")
    servers: dict[str, Any] = {}
    if server in ("openai", "both"):
        servers.update(openai=openai, openai_key=GOOD_KEY)
    if server in ("anthropic", "both"):
        servers.update(anthropic=anthropic, anthropic_key=ANTHROPIC_KEY)
    return servers


def command_env(block: Block, servers: dict[str, Any], *addopts: str) -> dict[str, str]:
    """The page's commands' environment; ``addopts``: what a test that runs a ``by=`` block adds to every pytest
    session of it (the report its checks read), through ``PYTEST_ADDOPTS``, the command lines left as written."""
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    bin_dir = venv_bin(block)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    if "venv" not in block.options:
        env["PATH"] = forkserver.shell_path(env["PATH"])  # its pytest forked from the warm server (tests/support)
    env["COLUMNS"] = "80"
    # scripts/ci_local.sh runs the example suite with it
    env["PYTHON"] = str(bin_dir / "python") if "venv" in block.options else sys.executable
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTEST_ADDOPTS"] = inner.addopts(" ".join([env.get("PYTEST_ADDOPTS", ""), "-p no:cacheprovider", *addopts]))
    if "openai" in servers:
        env["OPENAI_BASE_URL"] = servers["openai"].base_url
        env["OPENAI_API_KEY"] = servers["openai_key"]
    if "anthropic" in servers:
        env["ANTHROPIC_BASE_URL"] = servers["anthropic"].base_url
        env["ANTHROPIC_API_KEY"] = servers["anthropic_key"]
    for pair in block.options.get("env", "").split():
        name, _, value = pair.partition("=")
        env[name] = value
    return env


def shell(script: str, workdir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=workdir, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def run_commands(block: Block, workdir: Path, env: dict[str, str]) -> None:
    if block.language in SHELL:
        prepare(block, workdir)
        expected_exit = int(block.options.get("exit", "0"))
        result = shell(script(block), workdir, env)
        if result.returncode != expected_exit:
            raise BlockFailed(
                f"{block.id}: exit status {result.returncode}, the page expects {expected_exit}:\n"
                f"{(result.stdout + result.stderr)[-4000:]}"
            )
        return
    for _ in run_each(block, workdir, env):
        pass


def script(block: Block) -> str:
    """A bash block as it runs: one script that stops at the first command that fails."""
    return "set -euo pipefail\n" + block.source


def prepare(block: Block, workdir: Path) -> None:
    """The session directory as the page has it: the block's files, and the example suite where it asks for it."""
    write_files(block, workdir)
    if "examples" in block.options:
        copy_examples(workdir)


def run_each(
    block: Block, workdir: Path, env: dict[str, str]
) -> Iterator[tuple[Command, subprocess.CompletedProcess[str]]]:
    """A console block's commands in ``workdir`` (prepared first), one at a time, as the page shows them: each one's
    exit status and shown lines are checked before it is handed on, and the next runs only when the caller asks."""
    commands = console_commands(block.source)
    if not commands:
        raise BlockFailed(f"{block.id}: a console block without a '$ ' command (use ```text for output)")
    prepare(block, workdir)
    expected_exit = int(block.options.get("exit", "0"))
    for index, command in enumerate(commands):
        result = shell(command.line, workdir, env)
        want = expected_exit if index == len(commands) - 1 else 0
        output = (result.stdout + result.stderr).splitlines()
        if result.returncode != want:
            raise BlockFailed(
                f"{block.id}: `{command.line}` exited {result.returncode}, the page expects {want}:\n"
                + "\n".join(output[-60:])
            )
        mismatch = output_mismatch(command.expected, output)
        if mismatch is not None:
            raise BlockFailed(
                f"{block.id}: `{command.line}` does not print what the page shows: {mismatch}\n--- real output:\n"
                + "\n".join(output[-80:])
            )
        yield command, result


def claimed(page: str, by: str) -> list[Block]:
    """The blocks of ``page`` (relative to the root) that its ``by=`` leaves to the test file ``by``: that file runs
    them as written (``command_env``, ``run_each``) and checks more than this runner would."""
    return [b for b in page_blocks(ROOT / page) if b.options.get("by") == by]
