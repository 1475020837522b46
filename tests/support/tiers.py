"""The tiers of the test suite (issue 45): which tests need what the fast tier lacks, and why they skip without it.

``tests/conftest.py``'s ``pytest_collection_modifyitems`` marks every item from here, by its path, its name, its
fixtures and its parameters, so that no test file has to say it (a test says it only where nothing can be derived:
``@pytest.mark.browser`` or ``@pytest.mark.extra_venv(".venv-openai2")`` on the test itself). The markers are declared
in pyproject.toml; docs/testing.md gives the tiers and their commands.

- ``stats_validation``: the statistics validation, the exact and simulated error-rate and coverage checks.
- ``extra_venv``: needs ``.venv-litellm``, ``.venv-openai2`` or ``.venv-phoenix``; skips without it, naming the
  README's command that makes it.
- ``browser``: needs Chromium; skips without it.
- ``xdist_copy``: a case that repeats a serial case under ``-n N`` only to run it under xdist.

A test that needs what is missing skips at collection, before any fixture starts a server it could not use; in CI
(``$CI`` set), where everything must be there, it is left to run and fail saying what is missing.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: The markers of the tiers, declared in pyproject.toml.
TIER_MARKERS = ("stats_validation", "extra_venv", "browser", "xdist_copy")

#: Where the browser tests find Chromium (Debian's package, which .ci/run installs).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_MISSING = f"chromium not found at {CHROMIUM}: apt install chromium (.ci/run installs it)"

#: The extra venvs, each with the fixture that needs it wherever it is used.
VENV_OF_FIXTURE = {"phoenix": ".venv-phoenix"}
#: Items that need the LiteLLM proxy: its gateway tests (by module), whatever fixture names their proxy.
LITELLM_MODULES = ("test_gateway.py", "test_gateway_anthropic.py")
#: Tests that read LiteLLM's own files in its venv, by name.
LITELLM_TESTS = ("test_every_shipped_price_is_litellms",)

#: The statistics validation, by the test's name: within a ``stats`` folder, what checks coverage, error rates
#: (alpha, false alarms, A/A runs), power by exact rejection probability, simulated runs, grids of true rates,
#: exhaustive walks and the large-n cross-checks against scipy and exact sums; anywhere, a gate's error rate checked
#: over unchanged agents. Modules named for coverage are validation as a whole.
STATS_NAME = re.compile(
    r"cover|at_most_alpha|below_alpha|false_alarm|simulated|rarely_|_grid|grid_|miss_at_most|rejection_probability"
    r"|whole_walk|matches_scipy_at|equals_the_exact"
)
ANYWHERE_NAME = re.compile(r"at_most_alpha|rarely_fails")


@dataclass(frozen=True)
class Tier:
    """A marker an item gets, and why it skips here (None: it runs)."""

    marker: str
    arg: str | None = None
    skip: str | None = None


def readme_install(venv: str, root: Path = ROOT) -> str | None:
    """The README's command that makes ``venv`` (``python3 -m venv .venv-x && .venv-x/bin/pip install ...``)."""
    readme = (root / "README.md").read_text(encoding="utf-8")
    name = re.escape(venv)
    found = re.search(rf"python3 -m venv {name} && {name}/bin/pip install (?:(?! &&)[^\n\\])+", readme)
    return found.group(0).strip() if found else None


def litellm_found(root: Path = ROOT) -> bool:
    """The LiteLLM proxy as tests/support/gateways.py finds it: ``$CONSISTENCY_LITELLM``, the venv, then PATH."""
    candidates = [os.environ.get("CONSISTENCY_LITELLM"), str(root / ".venv-litellm" / "bin" / "litellm")]
    return any(c and Path(c).is_file() for c in candidates) or shutil.which("litellm") is not None


def venv_missing(venv: str, root: Path = ROOT) -> str | None:
    """Why a test needing ``venv`` cannot run here (its path and the README's command that makes it), or None."""
    if (root / venv / "bin" / "python").is_file() or (venv == ".venv-litellm" and litellm_found(root)):
        return None
    command = readme_install(venv, root) or "the README's test command"
    return f"{root / venv} does not exist; create it from the repository's root with: {command}"


def _without_workers(value: object) -> bool:
    return isinstance(value, (list, tuple)) and "-n" not in value


def _with_workers(value: object) -> bool:
    return isinstance(value, (list, tuple)) and "-n" in value


def xdist_copies(items: Iterable[Any]) -> set[str]:
    """The node ids of the cases that repeat a serial case under ``-n N``: a parameter of one test function takes
    arguments with ``-n`` and arguments without it (``[[], ["-n", "2"]]``), and the case is one with it, its id
    saying so (``[xdist]``; a list of bad arguments that holds ``-n`` is no copy). A test
    that runs only under xdist, or that compares xdist with a serial run itself, is not a copy."""
    by_function: dict[tuple[str, str], list[Any]] = {}
    for item in items:
        if getattr(item, "callspec", None) is not None:
            by_function.setdefault((str(item.path), item.originalname), []).append(item)
    copies = set()
    for cases in by_function.values():
        for name in cases[0].callspec.params:
            values = [case.callspec.params.get(name) for case in cases]
            if any(map(_without_workers, values)) and any(map(_with_workers, values)):
                copies.update(
                    case.nodeid
                    for case in cases
                    if _with_workers(case.callspec.params.get(name)) and "xdist" in case.callspec.id
                )
    return copies


def tiers(
    path: Path,
    name: str,
    fixtures: Iterable[str],
    params: Mapping[str, object],
    marked: Mapping[str, str | None],
    root: Path = ROOT,
) -> list[Tier]:
    """The tier markers of one test item, with why it skips here. ``marked``: the tier markers the test carries
    itself (marker -> its first argument)."""
    fixtures = set(fixtures)
    found: list[Tier] = []
    folders = path.relative_to(root).parts[:-1] if path.is_relative_to(root) else ()
    if ("stats" in folders and (STATS_NAME.search(name) or "coverage" in path.name)) or ANYWHERE_NAME.search(name):
        found.append(Tier("stats_validation"))
    venvs = {VENV_OF_FIXTURE[f] for f in fixtures & VENV_OF_FIXTURE.keys()}
    if (path.name in LITELLM_MODULES and fixtures & {"proxy", "gateway"}) or name in LITELLM_TESTS:
        venvs.add(".venv-litellm")
    block = params.get("block")
    if getattr(block, "options", None) is not None and block.options.get("venv"):  # type: ignore[attr-defined]
        venvs.add(block.options["venv"])  # type: ignore[attr-defined]
    if marked.get("extra_venv"):
        venvs.add(str(marked["extra_venv"]))
    found += [Tier("extra_venv", venv, venv_missing(venv, root)) for venv in sorted(venvs)]
    if "browser" in fixtures or "browser" in marked:
        found.append(Tier("browser", None, None if Path(CHROMIUM).exists() else CHROMIUM_MISSING))
    return found
