"""One minimal request before the first test, so a broken route costs one call instead of n x tasks."""

from __future__ import annotations

from .clients import provider_of
from .route import Route


def preflight(route: Route) -> str | None:
    """Return None when the route answers, else a message that says what to fix (the provider's own request)."""
    return provider_of(route).preflight(route)
