"""What a task's recorded cassettes say about its price: the calls of each repetition, with their usage and timing.

Why: the plan before the run (``pytest --consistency-plan``, :mod:`..analysis.plan`) needs each task's tokens,
dollars and wall time per repetition; a task the last report does not hold may still have been recorded. Each
cassette is read by the persister the replay reads it with (:class:`.persist.Persister`: vcrpy's serializers within
the bounds, every bad file a ``CassetteError`` naming it and the fix), each recorded response is decoded as vcrpy
decodes it, and its usage and timing are read by the capture wing's own readers, as a replayed call's are: the
headers by ``wire.complete_headers`` (the recorded latency and start), the body by ``wire.ResponseTap`` (JSON or
SSE, OpenAI or Anthropic usage). Nothing is sent and nothing is matched; pass or fail is not in a cassette.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pytest_consistency.capture.wire import ResponseTap, complete_headers, start_record
from pytest_consistency.cassette import _vcr
from pytest_consistency.cassette.paths import serializer_name, task_directory
from pytest_consistency.cassette.persist import Persister
from pytest_consistency.cassette.replay import _decoded
from pytest_consistency.cassette.scrub import Scrubber
from pytest_consistency.model.records import CallRecord

#: A repetition's cassette in either format (``paths.cassette_path``).
_REPETITION = re.compile(r"rep-([0-9]+)\.(yaml|json)")


class _Message:
    """The attributes the capture wing's readers take from a request or a response (names lower-cased)."""

    def __init__(self, headers: Any, **fields: Any) -> None:
        self.headers = {
            str(name).lower(): str(value[0] if isinstance(value, list) and value else value)
            for name, value in (headers or {}).items()
        }
        self.__dict__.update(fields)


def _bytes(body: Any) -> bytes:
    if isinstance(body, dict):
        body = body.get("string")
    if body is None:
        return b""
    return body if isinstance(body, bytes) else str(body).encode("utf-8")


def _call(request: Any, response: dict[str, Any]) -> CallRecord:
    content = _bytes(request.body)
    record = start_record(_Message(request.headers, url=request.uri, method=request.method), True, content)
    status = response.get("status", {})
    code = status.get("code", 0) if isinstance(status, dict) else 0
    answer = _Message(response.get("headers"), status_code=code)
    complete_headers(record, answer)
    latency, record.latency_ms = record.latency_ms, 0.0  # the tap sets no latency of its own over it
    tap = ResponseTap(record, answer.headers, 0.0, lambda _: None)
    tap.feed(_bytes(response.get("body")))
    tap.complete = True
    tap.close()
    record.latency_ms = latency
    return record


def repetition_calls(path: Path, rerecord: str) -> list[CallRecord]:
    """The calls recorded in one repetition's cassette (empty for an empty file); a bad file raises
    ``CassetteError`` naming it and ``rerecord``, the fix."""
    persister = Persister(Scrubber(None), rerecord)
    try:
        loaded = persister.load_cassette(path, _vcr.serializer(serializer_name(path)))
    except _vcr.cassette_not_found():
        return []
    requests, responses = loaded[0], loaded[1]
    return [_call(req, _decoded(resp, _vcr.decode_response)) for req, resp in zip(requests, responses, strict=True)]


def recorded_calls(root: Path, task_id: str, rerecord: str, suffix: str = ".yaml") -> list[list[CallRecord]]:
    """The calls of each recorded repetition of ``task_id`` under the cassette root ``root``, by repetition number
    (a repetition with a cassette in both formats is read in ``suffix``'s); empty when none is recorded."""
    directory = task_directory(root, task_id)
    if not directory.is_dir():
        return []
    found: dict[int, Path] = {}
    for path in sorted(directory.iterdir()):
        match = _REPETITION.fullmatch(path.name)
        if match and path.is_file() and (int(match[1]) not in found or path.suffix == suffix):
            found[int(match[1])] = path
    return [calls for _, path in sorted(found.items()) if (calls := repetition_calls(path, rerecord))]
