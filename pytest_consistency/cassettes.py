"""Per-repetition vcrpy cassettes: record once, replay every repetition offline, never leak a key.

One cassette per task repetition (``<dir>/<module>/<task>/rep-<i>.yaml``): a shared cassette would make
repetitions 2..n replay repetition 1 and report a false 0 % gap, and under xdist workers would race on it.
Requests match on method, URI, body and the key fingerprint, so a replay whose request changed is a replay
mismatch, not the old answer. The key fingerprint and the latency measured while recording travel in the
cassette as response headers, so a replay with a dummy key reports the recorded route.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .keys import KEY_LIKE, credential_of, fingerprint
from .wire import RECORDED_KEY_HEADER, RECORDED_LATENCY_HEADER

MODES = ("none", "once", "new_episodes", "all")
#: Request header the recording transport adds while recording; read and removed before anything is stored.
SENT_AT_HEADER = "x-consistency-sent-at"
#: Key used by the pinned clients when replaying without a key; its fingerprint matches any recorded one.
REPLAY_KEY = "consistency-replay-placeholder"
REPLAY_FINGERPRINT = fingerprint(REPLAY_KEY)
SECRET_REQUEST_HEADERS = ("authorization", "api-key", "x-api-key", "cookie", "openai-organization", "openai-project")
SECRET_RESPONSE_HEADERS = ("set-cookie", "openai-organization", "openai-project")
REDACTED = b"<redacted>"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


class SecretInCassetteError(RuntimeError):
    """The cassette about to be written still holds the live key; nothing was written."""


def safe_name(text: str) -> str:
    """A file name for ``text``; when characters had to be replaced, a hash of the original keeps it unique."""
    safe = _SAFE.sub("_", text).strip("._") or "task"
    if safe != text:
        safe = f"{safe[:80]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return safe


def cassette_path(root: Path, task_id: str, repeat: int) -> Path:
    """``root/<module path without .py>/<task>/rep-<i>.yaml``: repetition i keeps its file when n changes."""
    module, _, task = task_id.partition("::")
    module_dir = Path(*[safe_name(part) for part in Path(module).with_suffix("").parts])
    return root / module_dir / safe_name(task or module) / f"rep-{repeat}.yaml"


def secret_forms(key: str) -> list[str]:
    """Ways a key can appear in a file: raw, JSON- and URL-escaped, base64 (alone or as basic auth)."""
    forms = {key, json.dumps(key)[1:-1], quote(key, safe=""), base64.b64encode(key.encode()).decode()}
    for basic in (f":{key}", f"{key}:", f"api:{key}"):
        forms.add(base64.b64encode(basic.encode()).decode().rstrip("="))
    return sorted(f for f in forms if len(f) >= 8)


def scrub(body: Any, key: str | None) -> Any:
    """Remove key-like strings (masked ones included) and the live key from a body."""
    if body is None:
        return body
    data = body.encode() if isinstance(body, str) else bytes(body)
    if key:
        for form in secret_forms(key):
            data = data.replace(form.encode(), REDACTED)
    data = KEY_LIKE.sub(REDACTED, data)
    return data.decode() if isinstance(body, str) else data


def _header(headers: Any, name: str) -> str | None:
    value = headers.get(name)
    if isinstance(value, list):
        value = value[0] if value else None
    return None if value is None else str(value)


def before_record_request(key: str | None) -> Any:
    def hook(request: Any) -> Any:
        headers = request.headers
        fp = fingerprint(credential_of(headers))
        sent_at = _header(headers, SENT_AT_HEADER)
        for name in (*SECRET_REQUEST_HEADERS, SENT_AT_HEADER):
            if name in headers:
                del headers[name]
        headers[RECORDED_KEY_HEADER] = fp or ""
        if sent_at is not None:
            with contextlib.suppress(ValueError):
                headers[RECORDED_LATENCY_HEADER] = f"{(time.perf_counter() - float(sent_at)) * 1000:.3f}"
        request.body = scrub(request.body, key)
        return request

    return hook


def before_record_response(key: str | None) -> Any:
    def hook(response: dict[str, Any]) -> dict[str, Any]:
        headers = response.get("headers", {})
        for name in list(headers):
            if name.lower() in SECRET_RESPONSE_HEADERS:
                del headers[name]
        body = response.get("body", {})
        if "string" in body:
            body["string"] = scrub(body["string"], key)
        return response

    return hook


def before_save_interaction(request: Any, response: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Copy the recorded route facts onto the response, where a replaying transport can read them."""
    headers = response.setdefault("headers", {})
    for name in (RECORDED_KEY_HEADER, RECORDED_LATENCY_HEADER):
        value = _header(request.headers, name)
        if value is not None:
            headers[name] = [value]
    return request, response


def match_body(r1: Any, r2: Any) -> None:
    """Bytes first (the SDK serialises deterministically); parsed JSON only when the bytes differ."""
    if r1.body == r2.body:
        return
    try:
        same = json.loads(r1.body or b"null") == json.loads(r2.body or b"null")
    except ValueError:
        same = False
    if not same:
        raise AssertionError("request bodies differ (model, prompt or parameters changed)")


def match_key(r1: Any, r2: Any) -> None:
    """Same key fingerprint, unless one side is the replay placeholder (CI replays without a key)."""
    a, b = _header(r1.headers, RECORDED_KEY_HEADER), _header(r2.headers, RECORDED_KEY_HEADER)
    if a == b or REPLAY_FINGERPRINT in (a, b) or not a or not b:
        return
    raise AssertionError(f"key fingerprint differs ({a} recorded vs {b})")


class Persister:
    """Loads cassettes with replayed retries made instant; writes them atomically, after a secret scan."""

    def __init__(self, key: str | None) -> None:
        self.key = key

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        from vcr.persisters.filesystem import FilesystemPersister

        requests, responses, *rest = FilesystemPersister.load_cassette(cassette_path, serializer)
        for response in responses:
            headers = response.get("headers", {})
            if any(name.lower() in ("retry-after", "retry-after-ms") for name in headers):
                for name in [n for n in headers if n.lower() in ("retry-after", "retry-after-ms")]:
                    del headers[name]
                headers["retry-after-ms"] = ["1"]  # the SDK sleeps 1 ms instead of the recorded backoff
        return (requests, responses, *rest)

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize

        text = serialize(cassette_dict, serializer)
        if self.key:
            for form in secret_forms(self.key):
                if form in text:
                    raise SecretInCassetteError(
                        f"refusing to write {cassette_path}: it contains the live API key "
                        f"(as {_describe(form, self.key)}); nothing was written. A header or body escaped "
                        "scrubbing: please report it."
                    )
        path = Path(cassette_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _describe(form: str, key: str) -> str:
    return "the raw key" if form == key else "an encoded form of the key"


def make_vcr(mode: str, key: str | None) -> Any:
    import vcr

    recorder = vcr.VCR(
        record_mode=mode,
        match_on=("method", "uri", "consistency_body", "consistency_key"),
        before_record_request=before_record_request(key),
        before_record_response=before_record_response(key),
        before_save_interaction=before_save_interaction,
        decode_compressed_response=True,
        record_on_exception=False,
        drop_unused_requests=mode == "all",
    )
    recorder.register_matcher("consistency_body", match_body)
    recorder.register_matcher("consistency_key", match_key)
    recorder.register_persister(Persister(key))
    return recorder


@contextlib.contextmanager
def use_cassette(path: Path, mode: str, key: str | None, keep: Any) -> Iterator[Any]:
    """Enter the cassette; on the way out save it only if ``keep()`` says the repetition is worth keeping."""
    manager = make_vcr(mode, key).use_cassette(str(path))
    cassette = manager.__enter__()
    try:
        yield cassette
    except BaseException as exc:
        manager.__exit__(type(exc), exc, exc.__traceback__)
        raise
    if keep():
        manager.__exit__(None, None, None)
    else:
        error = RuntimeError("repetition failed while recording")
        manager.__exit__(RuntimeError, error, None)


def record_command(nodeid: str) -> str:
    return f"pytest '{nodeid}' --consistency-record=once"


def vcr_available() -> bool:
    try:
        import vcr  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def repetition_scope(path: Path | None, mode: str, key: str | None, keep: Any, observe: Any) -> Iterator[None]:
    """Everything around one marked repetition, innermost last: cassette, network block, transport observer.

    The observer goes inside the cassette so that it wraps vcrpy's patch and sees replayed attempts too.
    """
    from .network import blocked

    with contextlib.ExitStack() as stack:
        if path is not None and mode != "off" and vcr_available():
            stack.enter_context(use_cassette(path, mode, key, keep))
        if mode == "none":
            stack.enter_context(blocked("cassettes are replayed only (--consistency-record=none)"))
        stack.enter_context(observe())
        yield


def mismatch_message(nodeid: str, repeat: int, path: str, existed: bool, calls: list[Any]) -> str:
    missing = [c for c in calls if c.error == "replay_mismatch"]
    first = missing[0]
    what = (
        f"no cassette at {path}"
        if not existed
        else f"no recorded request in {path} matches it (method, URI, body and key fingerprint are compared: "
        "another model, prompt, parameter or key changes the request)"
    )
    return (
        f"replay mismatch in repetition {repeat}: {first.method} {first.url} (model {first.model_requested}) "
        f"was not recorded: {what}.\n"
        f"No live call was made. To record it: {record_command(nodeid)} (or --consistency-record=all to "
        "re-record); this counts as route drift (errors: replay_mismatch)."
    )
