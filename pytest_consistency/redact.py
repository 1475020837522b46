"""Credentials, recognised by rule and replaced before anything is written or shown.

One set of rules serves every place a secret could leak: cassettes (headers, query strings, URLs, bodies), call
records, the JSON report, the terminal and error messages. A fixed list of header names is not enough (gateways
invent their own: ``helicone-auth``, ``x-portkey-api-key``), so a header, query parameter or JSON field is a
credential when a *word* of its name says so (``auth``, ``key``, ``token``, ``secret``, ...), and a value is a
credential when it has the shape of one (``Bearer ...``, ``Basic ...``, ``sk-...`` with digits, other providers'
key prefixes). Words, not substrings: ``x-ratelimit-remaining-tokens`` and ``risk-assessment`` are not secrets.

The live key and every credential seen on the wire are also searched for literally, in every encoding a file can
hold them (raw, JSON ``\\u`` escapes, URL escapes, base64 alone or as basic auth).
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, unquote_plus, urlencode, urlsplit, urlunsplit

REDACTED = "<redacted>"
#: Our own headers carry fingerprints, never secrets, though their names contain "key".
OWN_PREFIX = "x-consistency-"
#: Words that make a header, query parameter or JSON field name a credential.
SECRET_WORDS = frozenset(
    {
        "auth",
        "authorization",
        "authentication",
        "apikey",
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "cookie",
        "credential",
        "credentials",
        "signature",
        "sig",
        "session",
        "jwt",
        "bearer",
    }
)
#: Names that are sensitive although no word says so: they identify the account.
SECRET_NAMES = frozenset(
    {
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
        "set-cookie",
        "proxy-authorization",
    }
)
#: Prefixes gateways put on the upstream's response headers they forward (LiteLLM: ``llm_provider-``); the name
#: behind one is judged as if it came straight from the provider.
FORWARDED_PREFIXES = ("llm_provider-",)
#: Compound words people write without separators.
_COMPOUND = re.compile(r"(api|access|auth|refresh|session|secret|private|client|subscription)(key|token|secret)$")

_KEY_SHAPES = (
    # OpenAI/Anthropic-style keys: sk-..., sk-proj-..., sk-ant-...; 20+ characters with at least one digit.
    r"sk-(?=[A-Za-z0-9_\-]*[0-9])[A-Za-z0-9_\-]{20,}",
    # Masked keys echoed by error bodies: sk-te****cdef.
    r"sk-[A-Za-z0-9_\-]*\*{3,}[A-Za-z0-9_\-]*",
    r"AIza[0-9A-Za-z_\-]{35}",  # Google
    r"gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key id
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack
)
_SCHEMES = r"(?:Bearer|Basic|Token|Bot)\s+[A-Za-z0-9._~+/=\-]{8,}"
#: A credential-shaped string inside free text, delimited so that words such as ``risk-assessment`` never match.
KEY_LIKE = re.compile(r"(?<![A-Za-z0-9_\-])(?:" + "|".join(_KEY_SHAPES) + r")(?![A-Za-z0-9_\-])|" + _SCHEMES)
_WORDS = re.compile(r"[A-Za-z][a-z]*|[0-9]+")


def name_is_secret(name: str) -> bool:
    """``helicone-auth``, ``x-portkey-api-key``, ``access_token``, ``apiKey``: yes; ``x-ratelimit-tokens``: no."""
    lowered = name.lower()
    if lowered.startswith(OWN_PREFIX):
        return False
    for prefix in FORWARDED_PREFIXES:
        lowered = lowered.removeprefix(prefix)
    if lowered in SECRET_NAMES:
        return True
    words = {word.lower() for word in _WORDS.findall(name.replace("_", "-"))}
    return bool(words & SECRET_WORDS) or bool(_COMPOUND.search(lowered.replace("-", "").replace("_", "")))


def value_is_secret(value: str) -> bool:
    return bool(KEY_LIKE.search(value))


@functools.lru_cache(maxsize=64)
def secret_forms(secret: str) -> tuple[str, ...]:
    """Ways a secret can appear in a file: raw, JSON- and URL-escaped, base64 (alone or as basic auth)."""
    forms = {
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=True)[1:-1],
        quote(secret, safe=""),
        base64.b64encode(secret.encode()).decode().rstrip("="),
    }
    for basic in (f":{secret}", f"{secret}:", f"api:{secret}"):
        forms.add(base64.b64encode(basic.encode()).decode().rstrip("="))
    return tuple(sorted(f for f in forms if len(f) >= 8))


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace known secrets (every encoding) and credential-shaped strings in free text."""
    for secret in secrets:
        if secret and len(secret) >= 8:
            for form in secret_forms(secret):
                text = text.replace(form, REDACTED)
    return KEY_LIKE.sub(REDACTED, text)


def redact_url(url: str, secrets: Iterable[str] = ()) -> str:
    """Drop ``user:password@`` and redact credential query parameters; the rest of the URL is kept."""
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
    cleaned = urlunsplit(parts._replace(netloc=netloc, query=query))
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


def header_credential(name: str, value: str) -> str | None:
    """The secret inside one header, if it is one: the token after ``Bearer``, else the whole value."""
    if not value or not (name_is_secret(name) or value_is_secret(value)):
        return None
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() in ("bearer", "token", "bot") and rest.strip():
        return rest.strip()
    if scheme.lower() == "basic" and rest.strip():
        try:
            return base64.b64decode(rest.strip()).decode("utf-8", "replace").partition(":")[2] or rest.strip()
        except ValueError:
            return rest.strip()
    return value.strip()


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


def redact_body(body: str | bytes | None, secrets: Iterable[str] = (), fields: bool = False) -> Any:
    """A body with credentials replaced; with ``fields``, credential-named JSON fields too.

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
    return cleaned.encode("utf-8") if is_bytes else cleaned


def redact_strings(data: Any, secrets: Iterable[str] = ()) -> Any:
    """Every string of a JSON-like structure, redacted (iteratively: depth is not a problem)."""
    secrets = [s for s in secrets if s]
    if isinstance(data, str):
        return redact_text(data, secrets)
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
                child = redact_text(value, secrets) if isinstance(value, str) else value
            if isinstance(target, dict):
                target[redact_text(key, secrets) if isinstance(key, str) else key] = child
            else:
                target.append(child)
    return root


def _variants(text: str) -> list[str]:
    """The text as written and as decoded from the escapes a file format may apply to it."""
    out = [text]
    if "\\" in text:
        out.append(re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text).replace("\\/", "/"))
        out.append(re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text))
    if "%" in text or "+" in text:
        out += [unquote(text), unquote_plus(text)]
    return out


def find_secret(data: Any, secrets: Iterable[str]) -> str | None:
    """The first secret found anywhere in ``data`` (strings, bytes, nested structures), in any encoding."""
    forms = [(secret, form) for secret in secrets if secret and len(secret) >= 8 for form in secret_forms(secret)]
    if not forms:
        return None
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, (str, bytes, bytearray)):
            text = item if isinstance(item, str) else bytes(item).decode("utf-8", "replace")
            for variant in _variants(text):
                for secret, form in forms:
                    if form in variant:
                        return "the raw secret" if form == secret else "an encoded form of a secret"
    return None
