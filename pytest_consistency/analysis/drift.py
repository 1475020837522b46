"""Route drift: did every repetition of a task travel the same route, the pinned one?

A route is per provider and endpoint kind (:func:`..model.records.endpoint_kind`): an agent's chat calls and its
embedding calls each travel their own, so the two models are no drift from one another, and the pinned model is
compared with the sampling calls only.

Pure functions over call records. Drift kinds:
``base_url``, ``key``, ``model_requested``, ``model_served``, ``deployment``, ``fallback``, ``retries`` and
``errors`` (HTTP errors, timeouts, connection failures, replay mismatches, refused-by-budget) and ``unobserved``
(cassette exchanges made by a client the plugin does not observe: the route is unknown, never "no drift"). A changing
``system_fingerprint`` is only a warning: providers rotate it without any change of route.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from pytest_consistency.model.records import SAMPLING_KINDS, CallRecord, agent_calls, endpoint_kind
from pytest_consistency.model.result import PinnedRoute, TaskDrift

_SNAPSHOT = re.compile(r"^-(\d{4}-\d{2}-\d{2}|\d{4}|\d{8})$")


def is_snapshot_of(served: str, requested: str) -> bool:
    """``gpt-4o-2024-08-06`` is a dated snapshot of ``gpt-4o``: the same model, named precisely."""
    return served == requested or (served.startswith(requested) and bool(_SNAPSHOT.match(served[len(requested) :])))


def error_kind(call: CallRecord) -> str | None:
    if call.error:
        return call.error
    if call.status is None or call.status < 400:
        return None
    return "5xx" if call.status >= 500 else str(call.status)


def _distinct(values: Iterable[str | None]) -> list[str]:
    return sorted({value for value in values if value})


def task_drift(
    repetitions: Sequence[Sequence[CallRecord]],
    pinned: PinnedRoute,
    unobserved: int = 0,
    others: Mapping[str, PinnedRoute] | None = None,
) -> TaskDrift:
    """Drift of one task's calls: each provider's calls against that provider's pinned route (``pinned`` is the
    OpenAI route's, ``others`` the rest by provider); a call of a provider without a pinned route is compared
    across repetitions only. Calls, retries and tokens are counted over all calls; drift and errors are read from
    the agent's calls only (``CallRecord.role``): a judge's retries or a simulated user's errors are not the agent's
    route drift."""
    drift = TaskDrift()
    drift.unobserved = unobserved
    calls = [call for rep in repetitions for call in rep]
    drift.calls = len(calls)
    drift.unpinned_calls = sum(not call.pinned for call in calls)
    drift.retries = sum(1 for call in calls if call.retry_index > 0)
    drift.tokens = {
        "prompt": sum(c.prompt_tokens for c in calls),
        "completion": sum(c.completion_tokens for c in calls),
        "total": sum(c.total_tokens for c in calls),
    }
    drift.tokens_per_repetition = [sum(c.total_tokens for c in rep) if rep else 0 for rep in repetitions]

    def flag(kind: str, detail: str) -> None:
        if kind not in drift.kinds:
            drift.kinds.append(kind)
        drift.details.append(detail)

    if unobserved:
        flag(
            "unobserved",
            f"{unobserved} HTTP exchange(s) in the cassettes were made by a client the plugin does not observe "
            "(aiohttp, requests, urllib3, ...): their route is unknown",
        )
    calls = agent_calls(calls)
    if not calls:
        return drift

    def check(kind: str, label: str, values: list[str], pinned_value: str | None) -> None:
        if len(values) > 1:
            flag(kind, f"{label}: {len(values)} different ({', '.join(values)})")
        elif values and pinned_value and values[0] != pinned_value:
            flag(kind, f"{label}: {values[0]}, not the pinned {pinned_value}")

    # A route per provider and endpoint kind: chat calls and embedding calls (or responses) are compared each with
    # their own kind, and the pinned model with the sampling kinds only.
    routes = sorted({(c.provider, endpoint_kind(c.url)) for c in calls})
    providers = sorted({provider for provider, _ in routes})
    unpinned = PinnedRoute(None, None, None, pinned.retries_max)
    for provider, kind in routes:
        group = [c for c in calls if c.provider == provider and endpoint_kind(c.url) == kind]
        route = pinned if provider == "openai" else (others or {}).get(provider, unpinned)
        prefix = "" if providers == ["openai"] else f"{provider} "
        if sum(1 for other, _ in routes if other == provider) > 1:  # the kind, where a provider has several
            prefix += f"{kind} "
        model = route.model if kind in SAMPLING_KINDS else None
        check("base_url", f"{prefix}base URL", _distinct(c.base_url for c in group), route.base_url)
        check("key", f"{prefix}key fingerprint", _distinct(c.key_fingerprint for c in group), route.key_fingerprint)
        check("model_requested", f"{prefix}model requested", _distinct(c.model_requested for c in group), model)
        answered = [c for c in group if c.model_served and c.status is not None and c.status < 400]
        served = _distinct(c.model_served for c in answered)
        if len(served) > 1:
            flag("model_served", f"{prefix}model served: {len(served)} different ({', '.join(served)})")
        for call in answered:
            requested, model = call.model_requested, call.model_served
            if requested and model and not is_snapshot_of(model, requested):
                flag("model_served", f"asked for {call.model_requested}, served {call.model_served}")
                break

    deployments = _distinct(c.gateway.get("x-litellm-model-id") for c in calls)
    if len(deployments) > 1:
        flag("deployment", f"gateway deployment: {len(deployments)} different (x-litellm-model-id)")
    fallbacks = sum(_int(c.gateway.get("x-litellm-attempted-fallbacks")) for c in calls)
    if fallbacks:
        flag("fallback", f"gateway fell back {fallbacks} time(s) (x-litellm-attempted-fallbacks)")

    most = max(c.retry_index for c in calls)
    gateway_retries = max(_int(c.gateway.get("x-litellm-attempted-retries")) for c in calls)
    if most > pinned.retries_max:
        flag("retries", f"retries: {most} on one request > allowed {pinned.retries_max}")
    if gateway_retries > pinned.retries_max:
        flag("retries", f"gateway retries: {gateway_retries} > allowed {pinned.retries_max}")

    errors = Counter(kind for kind in (error_kind(c) for c in calls) if kind)
    if errors:
        drift.errors = dict(sorted(errors.items()))
        flag("errors", "errors: " + ", ".join(f"{kind} x{count}" for kind, count in drift.errors.items()))

    fingerprints = _distinct(c.system_fingerprint for c in calls)
    if len(fingerprints) > 1:
        drift.warnings.append(f"system_fingerprint changed between calls ({', '.join(fingerprints)})")
    return drift


def _int(value: str | None) -> int:
    try:
        return int(str(value).strip()) if value not in (None, "") else 0
    except ValueError:
        return 0


def attribution(inconsistent: bool, drift: TaskDrift) -> str | None:
    """Where to look first for an inconsistent task: the route when it moved, the agent when it did not."""
    if not inconsistent:
        return None
    return "route drift" if drift.drifted else "agent"


def drift_pp(drifts: Sequence[TaskDrift]) -> float | None:
    with_calls = [d for d in drifts if d.calls or d.unobserved]
    if not with_calls:
        return None
    return sum(d.drifted for d in with_calls) * 100 / len(with_calls)
