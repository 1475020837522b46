"""Failures that are not the agent's outcome: a broken cassette, a refused call, a hook of the user's that raised.

Why apart from ordinary failures: ``min_pass < 1`` tolerates the agent failing now and then, and a tolerated
failure passes the run. A corrupt cassette, a cassette write refused because it still held a secret, a replay
whose request has no recorded answer, a call the token or cost budget refused, a client the agent built without a
key (the SDK refuses before any request) or a normalize hook that raised say nothing about the agent: tolerating
them would let a broken setup pass CI. So a repetition that failed for one of these reasons is marked with it; its
task's verdict is ``error`` (in no figure, never tolerated), and every output names the reason.

The exception is recognised by the qualified names of its classes, through its ``__cause__``/``__context__``
chain (SDKs wrap transport errors: openai raises ``APIConnectionError`` from ours), so nothing is imported here;
a missing credential by the SDK's message (openai raises its base ``OpenAIError``, anthropic a ``TypeError``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable

from pytest_consistency.model.records import CANNOT_CONNECT, CallRecord, RepetitionResult
from pytest_consistency.secrets.structures import redact_url

#: The reason of a repetition during which the replay's stand-in key was refused (a request, a child process).
STAND_IN_REASON = "stand-in key refused"
#: Exception classes (module-qualified) whose presence makes a failure the setup's, with the reason shown.
REASONS = {
    "pytest_consistency.cassette.messages.SecretInCassetteError": "cassette write refused (it still held a secret)",
    "pytest_consistency.cassette.messages.CassetteError": "cassette unreadable or unwritable",
    "pytest_consistency.shared.ledger.TokenBudgetExceeded": "token budget refused a call",
    "pytest_consistency.shared.ledger.CostBudgetExceeded": "cost budget refused a call",
    "pytest_consistency.capture.network.NetworkBlocked": "replay tried to reach the network",
    "pytest_consistency.capture.transport.LiveCallRefused": "replay tried to reach the network",
    "pytest_consistency.capture.transport.ModelNotSet": "no model on the route",
    "pytest_consistency.capture.standin.StandInKeyRefused": "stand-in key refused",
    "pytest_consistency.shared.throttle.ThrottleTimeout": "no throttle slot within the timeout",
    "pytest_consistency.analysis.answers.NormalizeError": "pytest_consistency_normalize_answer raised",
    "vcr.errors.CannotOverwriteExistingCassetteException": "replay mismatch (no recorded response)",
}
#: Call errors that are the setup's, not the agent's, even when the agent caught them and failed otherwise.
CALL_REASONS = {
    "replay_mismatch": "replay mismatch (no recorded response)",
    "token_budget": "token budget refused a call",
    "cost_budget": "cost budget refused a call",
}


def _chain(exc: BaseException | None) -> Iterable[BaseException]:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


#: What an SDK says when a client was built, or a request made, without any credential (openai 1.x to 3.x, anthropic),
#: with the variable it reads the key from: nothing was sent, so the agent did not fail.
CREDENTIAL_MESSAGES = {
    "Missing credentials": "OPENAI_API_KEY",
    "The api_key client option must be set": "OPENAI_API_KEY",
    "Could not resolve authentication method": "ANTHROPIC_API_KEY",
}


def exception_reason(exc: BaseException | None, replaying: bool = False, stand_in: Collection[str] = ()) -> str | None:
    """The reason when ``exc`` (or what it was raised from) is one of :data:`REASONS`, with its first line, or an
    SDK's missing-credentials error (:func:`credentials_reason`; ``replaying`` and ``stand_in`` are the
    repetition's: whether it replays, and which key variables held the stand-in key)."""
    for link in _chain(exc):
        for cls in type(link).__mro__:
            reason = REASONS.get(f"{cls.__module__}.{cls.__qualname__}")
            if reason is not None:
                first = str(link).strip().splitlines()
                return f"{reason}: {first[0][:300]}" if first else reason
        text = str(link)
        variable = next((v for message, v in CREDENTIAL_MESSAGES.items() if message in text), None)
        if variable is not None:
            return credentials_reason(variable, replaying, stand_in)
    return None


def credentials_reason(variable: str, replaying: bool, stand_in: Collection[str]) -> str:
    """Why a repetition whose client had no key is the setup's failure, and what to do, replaying or recording."""
    if replaying:
        held = f"${variable} {'held a stand-in key' if variable in stand_in else 'is set'}"
        return (
            f"missing credentials: a client the agent built has no API key, so the SDK refused to send before any "
            f"request. This repetition replays its cassette, which needs no key: {held}, so this client reads "
            "its key from elsewhere (another variable, a settings file). "
            f"Set that one to any value in the replay job (nothing is sent), or build the client from ${variable}"
        )
    return (
        f"missing credentials: a client the agent built has no API key, so the SDK refused to send before any "
        f"request. Recording calls the model live: export {variable}=<your key> (or the variable the agent reads "
        "its key from)"
    )


def call_reason(calls: Iterable[CallRecord]) -> str | None:
    """The reason when a call of the repetition was refused or unanswerable, whatever the test did with it."""
    for call in calls:
        reason = CALL_REASONS.get(call.error or "")
        if reason is not None:
            return f"{reason}: {call.method} {call.url}"
    return None


#: How a repetition none of whose calls reached the route says so (the first words of its reason).
UNREACHABLE = "cannot reach"
#: Answers that say the route itself is wrong (the key, the URL or the model), not the agent: 401, 403, 404.
ROUTE_REFUSALS = frozenset({401, 403, 404})
#: What to do about it, said once.
UNREACHABLE_ADVICE = "check the base URL (and the key) or run with --consistency-preflight"


def unreachable_reason(calls: Collection[CallRecord]) -> str | None:
    """The reason when every call of a failed repetition failed to connect or was refused by the route (401, 403,
    404): the route is broken, so the repetition is the setup's failure, not a measure of the agent."""
    if not calls or not all(c.detail == CANNOT_CONNECT or c.status in ROUTE_REFUSALS for c in calls):
        return None
    return f"{UNREACHABLE} {_facts(calls)}"


def _facts(calls: Iterable[CallRecord]) -> str:
    """``URL (N connection errors, M answered 401)``, per base URL the calls went to."""
    by_url: dict[str, Counter[str]] = {}
    for call in calls:
        count = by_url.setdefault(redact_url(call.base_url), Counter())
        count["connection error" if call.detail == CANNOT_CONNECT else f"answered {call.status}"] += 1
    return ", ".join(
        f"{url} ({', '.join(_counted(what, n) for what, n in count.items())})" for url, count in by_url.items()
    )


def _counted(what: str, n: int) -> str:
    return f"{n} {what}{'s' if n != 1 and what.endswith('error') else ''}"


def unreachable_line(repetitions: Iterable[RepetitionResult], where: str = "") -> str | None:
    """One line for every repetition that could not reach its route (``where`` prefixes it: a task's id), with the
    calls counted per base URL and the advice; None when there is none."""
    broken = [r for r in repetitions if (r.infrastructure or "").startswith(UNREACHABLE)]
    if not broken:
        return None
    tasks = len({r.task_id for r in broken})
    scope = f"{len(broken)} repetition{'s' if len(broken) != 1 else ''}"
    if not where:
        scope += f" of {tasks} task{'s' if tasks != 1 else ''}"
    facts = _facts(call for r in broken for call in r.calls)
    return f"{where}{UNREACHABLE} {facts} in {scope}; {UNREACHABLE_ADVICE}"
