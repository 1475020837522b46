"""One minimal request before the first test, so a broken route costs one call instead of n x tasks.

Only the routes the selected tests use are checked, once their selection is known (after collection): an
exported ``ANTHROPIC_API_KEY`` must not abort a run of OpenAI tests. Under xdist the controller collects nothing,
so each worker checks the routes its own tests use; a route that fails there fails each test that uses it, with
the preflight's message, before any of its calls is made.
"""

from __future__ import annotations

import time

from pytest_consistency.capture.clients import build_client, provider_of
from pytest_consistency.route.route import Route
from pytest_consistency.secrets.structures import redact_url


def preflight(route: Route) -> str | None:
    """Return None when the route answers, else a message that says what to fix (the provider's own request, sent
    by the route's pinned client without retries)."""
    provider = provider_of(route)
    client = build_client(route, ledger=None, provider=provider).with_options(max_retries=0)
    return provider.preflight(route, client)


def check_used(routes: dict[str, Route], used: set[str]) -> tuple[str, dict[str, str], list[str]]:
    """Preflight each used route: (what the report says, {route name: problem}, one line per route that answered:
    ``preflight: URL model M ok (38 ms)``); no used route is no request."""
    if not used:
        return "skipped: no selected test uses a pinned route", {}, []
    problems, passed = {}, []
    for name in sorted(used):
        route = routes[name]
        if route.problems:  # already refused, with its own message
            continue
        started = time.perf_counter()
        problem = preflight(route)
        if problem:
            problems[name] = problem
            continue
        took = (time.perf_counter() - started) * 1000
        model = f" model {route.model}" if route.model else ""
        passed.append(f"preflight: {redact_url(route.base_url)}{model} ok ({took:.0f} ms)")
    return ("failed" if problems else "ok"), problems, passed
