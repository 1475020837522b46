"""Credentials inside structures: a URL's userinfo, query and fragment, form and multipart bodies, JSON fields, and
every string of a JSON-like structure (the report, a call record) redacted once.

Names are judged by :func:`~pytest_consistency.secrets.names.name_is_secret`, values by their shape; the text that
remains goes through the known secrets of :mod:`~pytest_consistency.secrets.literals`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl, unquote, unquote_plus, urlencode, urlsplit, urlunsplit

from pytest_consistency.secrets.literals import redact_text, redactor, rules
from pytest_consistency.secrets.names import REDACTED, name_is_secret, redact_shapes, value_is_secret


def redact_url(url: str, secrets: Iterable[str] = ()) -> str:
    """Drop ``user:password@`` and redact credential query parameters and fragment pairs; the rest is kept."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url, secrets)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(name_is_secret(k) or value_is_secret(v) for k, v in pairs):
            query = urlencode(
                [(k, REDACTED if name_is_secret(k) or value_is_secret(v) else v) for k, v in pairs], safe="<>"
            )
    # An OAuth redirect carries its token in the fragment: ``#access_token=...&token_type=bearer``.
    fragment = redact_form(parts.fragment) if "=" in parts.fragment else parts.fragment
    cleaned = urlunsplit(parts._replace(netloc=netloc, query=query, fragment=fragment))
    return redact_text(cleaned, secrets)


def url_credentials(url: str) -> list[str]:
    """The secrets a URL carries: its password and credential query parameter values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [unquote(parts.password)] if parts.password else []
    found += [v for k, v in parse_qsl(parts.query) if v and (name_is_secret(k) or value_is_secret(v))]
    return found


#: A body that is nothing but ``name=value`` pairs joined by ``&``: ``application/x-www-form-urlencoded``.
_FORM = re.compile(r"[A-Za-z0-9_.~%*+\-\[\]]+=[^&\s]*(?:&[A-Za-z0-9_.~%*+\-\[\]]+=[^&\s]*)*")


#: A field of a ``multipart/form-data`` body that is not a file: its name, and its value up to the next boundary.
_MULTIPART_FIELD = re.compile(
    r'(Content-Disposition:[ \t]*form-data;(?![^\r\n]*filename)[^\r\n]*?\bname="([^"]*)"[^\r\n]*\r?\n'
    r"(?:[^\r\n]+\r?\n)*\r?\n)(.*?)(?=\r?\n--)",
    re.IGNORECASE | re.DOTALL,
)


def redact_multipart(text: str) -> str:
    """Credential-named fields of a ``multipart/form-data`` body lose their value; files and the rest are kept."""
    return _MULTIPART_FIELD.sub(
        lambda m: m.group(1) + REDACTED if name_is_secret(m.group(2)) and m.group(3) else m.group(0), text
    )


def body_credentials(body: str | bytes | None) -> list[str]:
    """The values of a request body's credential-named JSON fields and form pairs (``client_secret=``)."""
    if not body:
        return []
    try:
        text = body if isinstance(body, str) else bytes(body).decode("utf-8")
    except UnicodeDecodeError:
        return []
    found: list[str] = []
    if text.lstrip()[:1] in ("{", "["):
        try:
            stack = [json.loads(text)]
        except ValueError:
            return []
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                for key, value in item.items():
                    if isinstance(value, str) and value and name_is_secret(str(key)):
                        found.append(value)
                    elif isinstance(value, (dict, list)):
                        stack.append(value)
            elif isinstance(item, list):
                stack.extend(v for v in item if isinstance(v, (dict, list)))
    elif "=" in text and _FORM.fullmatch(text.strip()):
        for pair in text.strip().split("&"):
            name, _, value = pair.partition("=")
            if value and name_is_secret(unquote_plus(name)):
                found.append(unquote_plus(value))
    else:
        found += [m.group(3) for m in _MULTIPART_FIELD.finditer(text) if m.group(3) and name_is_secret(m.group(2))]
    return found


def redact_json_fields(data: Any, depth: int = 0) -> Any:
    """Credential-named fields of parsed JSON (``{"api_key": "..."}``) lose their string values."""
    if depth > 200:
        return data
    if isinstance(data, dict):
        return {
            k: REDACTED if isinstance(v, str) and v and name_is_secret(str(k)) else redact_json_fields(v, depth + 1)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [redact_json_fields(v, depth + 1) for v in data]
    return data


def redact_form(text: str) -> str:
    """Form pairs whose name says credential (as decoded: ``client%5Fsecret``) or whose value looks like one lose
    their value; every other pair is kept byte for byte. Text that is not a form is returned unchanged."""
    if not _FORM.fullmatch(text.strip()):
        return text
    pairs = []
    for pair in text.split("&"):
        name, _, value = pair.partition("=")
        if name_is_secret(unquote_plus(name)) or value_is_secret(unquote_plus(value)):
            pair = f"{name}={REDACTED}"
        pairs.append(pair)
    return "&".join(pairs)


def redact_body(body: str | bytes | None, secrets: Iterable[str] = (), fields: bool = False) -> Any:
    """A body with credentials replaced; with ``fields``, credential-named JSON fields and form pairs too.

    Only request bodies get ``fields``: they are matched by a digest of what was sent, so redacting them changes
    nothing on replay, while a response's ``"token"`` (logprobs) must come back exactly as recorded.
    """
    if body is None:
        return None
    is_bytes = not isinstance(body, str)
    try:
        text = body if isinstance(body, str) else bytes(body).decode("utf-8")
    except UnicodeDecodeError:
        return body  # binary: searched literally by the pre-write scan
    secrets = [secret for secret in secrets if secret]
    cleaned = redact_text(text, secrets)
    if cleaned.lstrip()[:1] in ("{", "["):
        try:
            parsed = json.loads(cleaned)
        except ValueError:
            parsed = None
        if parsed is not None:  # strings as JSON decodes them: a key written with \u escapes is still the key
            redacted = redact_strings(parsed, secrets)
            if fields:
                redacted = redact_json_fields(redacted)
            if redacted != parsed:
                cleaned = json.dumps(redacted, ensure_ascii=False)
    elif fields and "=" in cleaned:
        cleaned = redact_form(cleaned) if "form-data" not in cleaned else redact_multipart(cleaned)
    return cleaned.encode("utf-8") if is_bytes else cleaned


def memoised(redact: Callable[[str], str]) -> Callable[[str], str]:
    """``redact`` with its answers remembered for the life of the returned function."""
    seen: dict[str, str] = {}

    def once(text: str) -> str:
        done = seen.get(text)
        if done is None:
            done = seen[text] = redact(text)
        return done

    return once


#: ``_shapes_only``'s answers: with no secret known (a cassette's responses as they load, before the repetition has
#: sent anything) redaction is the credential shapes alone, the same function for every cassette of the session,
#: whose JSON repeats the same keys and values ("id", "choices", "assistant", "stop", the model id).
_SHAPES_ANSWERS: dict[str, str] = {}


def _shapes_only(text: str) -> str:
    """``redactor(())``: credential-shaped strings out, remembered for short texts (long ones rarely repeat)."""
    done = _SHAPES_ANSWERS.get(text)
    if done is None:
        done = redact_shapes(text)
        if len(text) <= 256:
            if len(_SHAPES_ANSWERS) >= 8192:
                _SHAPES_ANSWERS.clear()
            _SHAPES_ANSWERS[text] = done
    return done


def redact_strings(data: Any, secrets: Iterable[str] = ()) -> Any:
    """Every string of a JSON-like structure, redacted (iteratively: depth is not a problem).

    Each distinct string is redacted once: a report repeats the same keys, URLs, model ids and fingerprints in
    every call record (a million strings of which a few thousand differ, for 1,000 tasks x 10 x 20 calls), and
    redaction is a pure function of the text.
    """
    secrets = list(secrets)  # read twice below: an iterator would be empty the second time
    redact = memoised(redactor(secrets)) if rules(secrets) else _shapes_only
    if isinstance(data, str):
        return redact(data)
    if not isinstance(data, (dict, list)):
        return data
    root: Any = {} if isinstance(data, dict) else []
    stack: list[tuple[Any, Any]] = [(data, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, value in items:
            if isinstance(value, (dict, list)):
                child: Any = {} if isinstance(value, dict) else []
                stack.append((value, child))
            else:
                child = redact(value) if isinstance(value, str) else value
            if isinstance(target, dict):
                target[redact(key) if isinstance(key, str) else key] = child
            else:
                target.append(child)
    return root
