"""One minimal request before the first test, so a broken route costs one call instead of n x tasks.

Only the routes the selected tests use are checked, once their selection is known (after collection): an
exported ``ANTHROPIC_API_KEY`` must not abort a run of OpenAI tests. Under xdist the controller collects nothing,
so each worker checks the routes its own tests use; a route that fails there fails each test that uses it, with
the preflight's message, before any of its calls is made.
"""

from __future__ import annotations

from pytest_consistency.capture.clients import build_client, provider_of
from pytest_consistency.route.route import Route


def preflight(route: Route) -> str | None:
    """Return None when the route answers, else a message that says what to fix (the provider's own request, sent
    by the route's pinned client without retries)."""
    provider = provider_of(route)
    client = build_client(route, ledger=None, provider=provider).with_options(max_retries=0)
    return provider.preflight(route, client)


def check_used(routes: dict[str, Route], used: set[str]) -> tuple[str, dict[str, str]]:
    """Preflight each used route: (what the report says, {route name: problem}); no used route is no request."""
    if not used:
        return "skipped: no selected test uses a pinned route", {}
    problems = {}
    for name in sorted(used):
        if routes[name].problems:  # already refused, with its own message
            continue
        problem = preflight(routes[name])
        if problem:
            problems[name] = problem
    return ("failed" if problems else "ok"), problems
