"""The plugin's default implementations of its own hooks (``hookspecs``), registered under the name
:data:`DEFAULTS` (``pytest_addhooks``): the session recognises them by that name, never by module path.

Each is ``trylast``: a conftest's or another plugin's implementation answers first. Their modules load when first
called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_consistency.report.protocol import Format
    from pytest_consistency.route.providers import Provider

#: The name the default implementations are registered under.
DEFAULTS = "consistency-defaults"


@pytest.hookimpl(trylast=True)
def pytest_consistency_normalize_answer(answer: Any, task_id: str) -> Any:
    from pytest_consistency.analysis.answers import default_normalize

    return default_normalize(answer)


@pytest.hookimpl(trylast=True)
def pytest_consistency_report_format(name: str, config: pytest.Config) -> Format | None:
    from pytest_consistency.report import builtin

    fmt = builtin(name)
    if name == "otlp-json":  # the prompts and completions only with --consistency-otel-content
        from pytest_consistency.plugin.state import STATE
        from pytest_consistency.report.otlp import OtlpJsonFormat

        state = config.stash.get(STATE, None)
        return OtlpJsonFormat(content=state is not None and state.settings.otel_content)
    return fmt


@pytest.hookimpl(trylast=True)
def pytest_consistency_provider(name: str, config: pytest.Config) -> Provider | None:
    from pytest_consistency.route import providers

    return providers.builtin(name)


@pytest.hookimpl(trylast=True)
def pytest_consistency_answers_equivalent(left: Any, right: Any, task_id: str) -> bool:
    from pytest_consistency.analysis.answers import default_equivalent

    return default_equivalent(left, right)
