"""What the cassettes tell the user: their errors, a replay mismatch in words, the commands that record.

Why a module of its own: the plugin reports a replay mismatch and recognises a cassette error after the repetition,
and names the record command before it; none of that needs vcrpy or the scrubbing and matching machinery. The
words read vcrpy's mismatch exception only by its attributes (``reason``, ``similar_requests``), so nothing here
imports vcrpy.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_consistency.capture.wire import split_url
from pytest_consistency.cassette.paths import format_hint
from pytest_consistency.model.records import NOT_RECORDED
from pytest_consistency.secrets.structures import redact_url


class CassetteError(RuntimeError):
    """A cassette cannot be read or written; the message names the file and the fix. Fails one repetition."""


class SecretInCassetteError(CassetteError):
    """The cassette about to be written still holds a secret; nothing was written."""


def record_command(nodeid: str, existed: bool) -> str:
    """The command that records this repetition: ``once`` never replaces an existing cassette, ``all`` does."""
    mode = "all" if existed else "once"
    return f"pytest '{nodeid}' --consistency-record={mode}"


def not_recorded_message(task_id: str, folder: str, key_env: str) -> str:
    """One line for a task that has no cassette yet, with the command that records it: the test function's node id
    (``once`` records what has no cassette, so a parametrized function's recorded cases are only replayed)."""
    function = task_id.split("[", 1)[0]
    return (
        f"{NOT_RECORDED}: no cassette under {folder}; record it with: "
        f"{key_env}=<your key> pytest '{function}' --consistency-record=once"
    )


def rerecord_advice(nodeid: str) -> str:
    return f"to fix it, delete the file or re-record it: {record_command(nodeid, existed=True)}"


def mismatch_detail(exc: BaseException) -> str | None:
    """What vcrpy found closest to an unmatched request, in the plugin's words (None for other errors). A URI that
    differs is shown beside the recorded one (redacted: a key in a query string never shows), and a base URL that
    differs is named as such, with the recording's (``mismatch_message`` then gives that fix, not a re-recording)."""
    reason = getattr(exc, "reason", None)
    if reason is None or not hasattr(exc, "similar_requests"):
        return None
    if reason == "cassette_not_found":
        return "no cassette"
    if reason == "already_played":
        return "every matching recorded request was already replayed (this repetition made more calls than recorded)"
    names = {"match_body": "body", "match_key": "key fingerprint", "uri": "URI", "method": "method"}
    failed = sorted({names.get(str(name), str(name)) for _, _, fails in exc.similar_requests for name, _ in fails})
    if not failed:
        return "nothing similar was recorded"
    where = next(
        (
            str(message).split(": ", 1)[1]
            for _, _, fails in exc.similar_requests
            for name, message in fails
            if name == "match_body" and ": " in str(message)
        ),
        None,
    )
    uri = ""
    recorded = next(
        (request for request, _, fails in exc.similar_requests if any(name == "uri" for name, _ in fails)), None
    )
    sent = getattr(getattr(exc, "failed_request", None), "uri", None)
    if recorded is not None and sent is not None:
        uri = f"; recorded {redact_url(str(recorded.uri))}, sent {redact_url(str(sent))}"
        recorded_base, sent_base = split_url(str(recorded.uri))[1], split_url(str(sent))[1]
        if recorded_base != sent_base:
            uri += f": {BASE_URL_DIFFERS} ({redact_url(recorded_base)})"
    return (
        f"closest recorded request differs in: {', '.join(failed)}"
        + uri
        + (f"; body first differs at {where}" if where else "")
    )


#: How ``mismatch_detail`` says that a request went to another base URL than the recording's, which it names next,
#: in parentheses; ``mismatch_message`` gives the fix for it.
BASE_URL_DIFFERS = "the base URL differs from the recording's"


def mismatch_message(
    nodeid: str, repeat: int, path: str, existed: bool, calls: list[Any], other_format: str | None = None
) -> str:
    missing = [c for c in calls if c.error == "replay_mismatch"]
    first = missing[0]
    found = ""
    if other_format is not None:
        found = f" ({format_hint(other_format, 'json' if path.endswith('.json') else 'yaml')})"
    what = (
        f"no cassette at {path}{found}"
        if not existed
        else f"no recorded request in {path} matches it (method, URI, body and key fingerprint are compared: "
        "another model, prompt, parameter or key changes the request)"
    )
    detail = f" [{first.detail}]" if first.detail and existed else ""
    client = "" if first.pinned else " (sent by a client the agent built itself)"
    advice = (
        f"To re-record this repetition: {record_command(nodeid, existed)} (or --consistency-record=new_episodes "
        "to keep what matches and add what is new)"
        if existed
        else f"To record it: {record_command(nodeid, existed)}"
    )
    moved = re.search(re.escape(BASE_URL_DIFFERS) + r" \((\S+)\)", first.detail or "") if existed else None
    if moved is not None:
        # The replay job lacks the base URL of the recording job (a gateway's, in OPENAI_BASE_URL): re-recording
        # would call the model again to fix a setting.
        base = moved[1]
        from pytest_consistency.route.providers import builtin

        provider = builtin(first.provider)
        variable = provider.base_url_env if provider is not None else "OPENAI_BASE_URL"
        section, option = (
            ("routes: anthropic:", "--consistency-anthropic-base-url")
            if first.provider == "anthropic"
            else ("route:", "--consistency-base-url")
        )
        where = (
            f"export {variable}={base} in the replay job, as in the recording job (the client the agent builds "
            f"reads it; base_url: under {section} in consistency.yaml, or {option}, sets the pinned clients' only)"
            if not first.pinned
            else f"set base_url: {base} under {section} in consistency.yaml (or {option}), or export "
            f"{variable}={base}, as when recording"
        )
        advice = (
            f"The fix is the base URL, not a new recording: {where}; or replay at any host with "
            f"--consistency-replay-any-host. Re-record ({record_command(nodeid, existed)}) only if the new base URL "
            "is meant"
        )
    return (
        f"replay mismatch in repetition {repeat}: {first.method} {first.url} (model {first.model_requested})"
        f"{client} was not recorded: {what}{detail}.\n"
        f"No live call was made. {advice}; this counts as route drift (errors: replay_mismatch)."
    )
