"""How a cassette file is read and written: vcrpy's persister for the plugin's cassettes.

Registered with vcrpy's ``register_persister`` (as pytest-recording's ``_vcr.py`` registers its own), so vcrpy
reads and writes every cassette through it; the fast replay path (``replay``) reads through it too. Reading turns
every way a file can be bad into a ``CassetteError`` naming the file and the fix, raised in the repetition's setup,
never inside the agent's call; and makes replayed retries instant. Writing is atomic (a temporary file, then a
rename), after a scan for every secret the repetition sent. The text is parsed by vcrpy's serializers (libyaml's
C loader for YAML, ``json`` for JSON), chosen by vcrpy from the cassette's format.

``Persister`` has vcrpy's persister interface (``load_cassette``, ``save_cassette``) without subclassing vcrpy's
``FilesystemPersister``: it overrides both methods, so it would inherit nothing, and a subclass would import vcrpy
when this module loads (the rest of the wing asks ``_vcr`` only when it runs).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest_consistency.cassette.rescrub as late_secrets
from pytest_consistency.capture.wire import RECORDED_RETRY_HEADER
from pytest_consistency.cassette import _vcr
from pytest_consistency.cassette.bounds import UnboundedCassette, shown
from pytest_consistency.cassette.messages import CassetteError, SecretInCassetteError
from pytest_consistency.cassette.paths import serializer_name
from pytest_consistency.cassette.scrub import Scrubber, header
from pytest_consistency.secrets.literals import find_secret


def field_problem(request: Any, response: Any) -> str | None:
    """The first field of one exchange that a replay could not use, as ``field is value, not what``; None when every
    field has the type vcrpy writes. ``request`` is vcrpy's ``Request`` as loaded, or the mapping of the file.

    vcrpy loads a hand-edited file without looking at its fields and fails only when a replay builds the response,
    inside the agent's call (``code: 'OK'`` is a ``ValueError`` there, a header that is not a list of strings a
    ``TypeError`` or garbled headers), where the error reads as the agent's own. Checked at load time instead, the
    file is a corrupt cassette (an infrastructure error, never tolerated). A few isinstance checks per exchange.
    """
    problem = _request_problem(request)
    if problem is not None:
        return problem
    if type(response) is not dict:
        return f"response is {shown(response)}, not a mapping of status, headers and body"
    status = response.get("status")
    if type(status) is not dict:
        return f"response.status is {shown(status)}, not a mapping of code and message"
    code = status.get("code")
    if type(code) is not int:
        return f"response.status.code is {shown(code)}, not a number (an HTTP status such as 200)"
    if "message" not in status:
        return "response.status.message is missing (the reason phrase, such as OK; vcrpy reads it)"
    message = status["message"]
    if message is not None and type(message) is not str:
        return f"response.status.message is {shown(message)}, not text (the reason phrase, such as OK)"
    headers = response.get("headers")
    if type(headers) is not dict:
        return f"response.headers is {shown(headers)}, not a mapping of names to lists of values"
    for name, values in headers.items():
        if type(values) is list:
            for value in values:
                if type(value) is not str:
                    break
            else:
                continue
        label = name if type(name) is str and len(name) <= 60 else shown(name)
        return f"response.headers.{label} is {shown(values)}, not a list of strings (such as ['text/plain'])"
    body = response.get("body")
    if type(body) is not dict:
        return f"response.body is {shown(body)}, not a mapping with the body's string"
    string = body.get("string")  # an aiohttp recording may have none
    if string is not None and not isinstance(string, (bytes, str)):
        return f"response.body.string is {shown(string)}, not text"
    return None


def _request_problem(request: Any) -> str | None:
    if type(request) is dict:  # as the file holds it (see ``_raw_problem``)
        for name in ("method", "uri", "headers"):
            if name not in request:
                return f"request.{name} is missing"
        method, uri, body = request["method"], request["uri"], request.get("body")
        if type(uri) is not str:
            return f"request.uri is {shown(uri)}, not a URL"
        if type(request["headers"]) is not dict:
            return f"request.headers is {shown(request['headers'])}, not a mapping of names to lists of values"
        text = body is None or isinstance(body, (bytes, str)) or hasattr(body, "read") or hasattr(body, "__next__")
    else:  # vcrpy's Request: text is bytes by now, a file or iterator body (old vcrpy files) a list
        method, body = getattr(request, "method", None), getattr(request, "_body", None)
        text = body is None or isinstance(body, (bytes, list))
    if type(method) is not str:
        return f"request.method is {shown(method)}, not an HTTP method such as POST"
    if not text:
        return f"request.body is {shown(body)}, not text"
    return None


def _raw_problem(text: str, serializer: Any) -> str | None:
    """Why vcrpy could not build the exchanges of a file it parsed, as a field (``interactions[2].response.body``),
    or None when it did not parse or the fields look right. Only asked once loading has failed."""
    try:
        data = serializer.deserialize(text)
    except Exception:
        return None
    interactions = data.get("interactions") if type(data) is dict else None
    if type(interactions) is not list:
        return None  # vcrpy's own message says it (an old cassette, no interactions)
    for index, interaction in enumerate(interactions):
        if type(interaction) is not dict:
            return f"interactions[{index}] is {shown(interaction)}, not a mapping of request and response"
        for name in ("request", "response"):
            if name not in interaction:
                return f"interactions[{index}].{name} is missing"
        request = interaction["request"]
        if type(request) is not dict:
            return f"interactions[{index}].request is {shown(request)}, not a mapping"
        problem = field_problem(request, interaction["response"])
        if problem is not None:
            return f"interactions[{index}].{problem}"
    return None


class Persister:
    """Loads cassettes with replayed retries made instant; writes them atomically, after a secret scan.

    Every way a file can be bad (unreadable, not YAML, a merge conflict, the wrong shape, an unknown tag, a field of
    the wrong type: ``field_problem``) becomes a ``CassetteError`` naming the file and the fix, raised in the
    repetition's setup: one bad file fails one repetition, never the session.
    """

    def __init__(self, scrubber: Scrubber, rerecord: str) -> None:
        self.scrubber = scrubber
        self.rerecord = rerecord
        #: Cassettes already parsed (and filtered) by the fast replay path, by file: vcrpy loading the same file
        #: later in the repetition takes them instead of parsing it again (see ``replay``).
        self.parsed: dict[str, Any] = {}

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        CassetteNotFoundError = _vcr.cassette_not_found()
        serializer = _vcr.bounded(serializer)  # vcrpy hands its own: a cassette is read within the bounds
        if str(cassette_path) in self.parsed:
            return self.parsed.pop(str(cassette_path))
        path = Path(cassette_path)
        try:
            text = path.read_bytes().decode("utf-8")
        except (FileNotFoundError, NotADirectoryError):
            raise CassetteNotFoundError() from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CassetteError(f"cannot read cassette {path}: {exc}; {self.rerecord}") from None
        if "\n<<<<<<< " in "\n" + text or "\n>>>>>>> " in text:
            raise CassetteError(
                f"cassette {path} contains git merge conflict markers (<<<<<<< / >>>>>>>); keep one side of the "
                f"conflict, {self.rerecord.removeprefix('to fix it, ')}"
            )
        try:
            # What FilesystemPersister.load_cassette does with the text, without reading the file a second time:
            # universal newlines (it reads in text mode), an empty file is a missing cassette, then deserialize.
            if "\r" in text:
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            if not text.strip():
                raise CassetteNotFoundError()
            requests, responses, *rest = _vcr.deserialize(text, serializer)
            for index, (request, response) in enumerate(zip(requests, responses, strict=True)):
                problem = field_problem(request, response)
                if problem is not None:
                    raise CassetteError(
                        f"cassette {path} is not a valid cassette: interactions[{index}].{problem}; {self.rerecord}"
                    )
            for response in responses:
                headers = response.get("headers", {})
                retry = [n for n in headers if n.lower() in ("retry-after", "retry-after-ms")]
                if retry:
                    sent = {n.lower(): str(header(headers, n)) for n in retry}
                    for name in retry:
                        del headers[name]
                    headers["retry-after-ms"] = ["1"]  # the SDK sleeps 1 ms instead of the recorded backoff
                    headers[RECORDED_RETRY_HEADER] = [json.dumps(sent, sort_keys=True)]
        except (CassetteNotFoundError, CassetteError):
            raise
        except UnboundedCassette as exc:  # refused before anything was built: nothing to look into
            raise CassetteError(f"cassette {path} is refused: {exc.problem}; {self.rerecord}") from None
        except Exception as exc:
            field = _raw_problem(text, serializer)
            if field is not None:
                raise CassetteError(f"cassette {path} is not a valid cassette: {field}; {self.rerecord}") from None
            what = str(getattr(exc, "problem", None) or f"{type(exc).__name__}: {exc}")
            if len(what) > 300:  # a parser's or vcrpy's message may quote the file
                what = what[:297] + "..."
            raise CassetteError(f"cassette {path} is not a valid cassette ({what}); {self.rerecord}") from None
        return (requests, responses, *rest)

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        path = Path(cassette_path)
        serializer = _vcr.bounded(serializer)  # writes no alias, which the next replay would refuse
        try:
            text = _vcr.serialize(cassette_dict, serializer)
        except TypeError:
            if serializer_name(path) != "json":
                raise
            # vcrpy's JSON format holds text only: a body that is not UTF-8 (an image, a compressed payload) stays
            # bytes, which json.dumps refuses.
            raise CassetteError(
                f"cannot write cassette {path} as JSON: a request or response body in it is binary (not UTF-8 "
                "text), which vcrpy's JSON format cannot hold; nothing was written. Record this task with "
                "--consistency-cassette-format=yaml"
            ) from None
        # The text as written (every escape a YAML writer may use) and as read back (the strings themselves).
        found = find_secret(text, self.scrubber.secrets) or find_secret(
            _vcr.deserialize(text, serializer), self.scrubber.secrets
        )
        if found:
            raise SecretInCassetteError(
                f"refusing to write {path}: it contains {found} sent in this repetition (a key, token or "
                "password); nothing was written. A header or body escaped redaction: please report it."
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        except OSError as exc:
            raise CassetteError(
                f"cannot write cassette {path}: {exc.strerror or exc}; make {path.parent} writable or point "
                "--consistency-cassettes at a writable directory"
            ) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise CassetteError(f"cannot write cassette {path}: {exc.strerror or exc}") from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        # Scanned for what this repetition knew: the session's end looks again for what it learns later.
        late_secrets.note_written(path, self.scrubber.secrets)
