"""API keys: a short one-way fingerprint is all that ever leaves this module."""

from __future__ import annotations

import hashlib

from pytest_consistency.secrets.names import header_credential
from pytest_consistency.secrets.structures import body_credentials, url_credentials

#: Values people leave in place of a key; compared case-insensitively after stripping.
PLACEHOLDERS = frozenset(
    {
        "your_api_key",
        "your-api-key",
        "yourapikey",
        "your_key_here",
        "your-key-here",
        "api_key",
        "apikey",
        "sk-...",
        "sk-xxx",
        "sk-xxxx",
        "xxx",
        "changeme",
        "replace_me",
        "<api_key>",
        "<your_api_key>",
        "${openai_api_key}",
        "$openai_api_key",
        "none",
        "null",
        "todo",
        "key",
    }
)


#: Key used by the pinned clients when replaying: replay-only mode never sends, so it never needs a real one. It
#: identifies no route: a request sent with it has no key fingerprint (a replay mismatch is not key drift).
REPLAY_KEY = "consistency-replay-placeholder"


def fingerprint(key: str | None) -> str | None:
    """``sha256:`` and 8 hex digits: enough to tell keys apart, useless for recovering one."""
    if not key:
        return None
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]


#: Key prefixes of the providers' documentation; what follows one in a placeholder is only filler.
_KEY_PREFIXES = ("sk-ant-api03-", "sk-ant-", "sk-proj-", "sk-")
_FILLER = frozenset("x.*<>_-")


def is_placeholder(key: str) -> bool:
    """``YOUR_API_KEY``, ``sk-...``, ``sk-ant-xxxx``, ``sk-proj-****``: copied from documentation, never a key."""
    text = key.strip().lower()
    if text in PLACEHOLDERS or text.startswith(("your", "<your")):
        return True
    for prefix in _KEY_PREFIXES:
        if text.startswith(prefix):
            rest = text[len(prefix) :]
            if not rest or set(rest) <= _FILLER:
                return True
            break
    return "xxxx" in text and len(set(text)) <= 5


def key_problem(key: str) -> str | None:
    """What is wrong with a key's characters, described without showing it (it would reach logs and JUnit)."""
    if key != key.strip():
        return "has leading or trailing whitespace or a line break (a .env file with CRLF, or `echo` output)"
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in key):
        return "contains whitespace or control characters"
    if not key.isascii():
        return "contains non-ASCII characters (HTTP headers cannot carry them; was it pasted with smart quotes?)"
    return None


def credential_of(headers: object, url: str = "") -> str | None:
    """The credential a request actually carries: ``Authorization: Bearer``, ``api-key``, ``x-api-key``, then any
    other credential header, then the URL's password or credential query parameter."""
    items = getattr(headers, "items", None)
    if items is None:
        return None
    found: list[tuple[int, str]] = []
    for name, value in items():
        name = str(name).lower()
        value = value[0] if isinstance(value, list) and value else value
        secret = header_credential(name, str(value)) if isinstance(value, (str, bytes)) else None
        if secret:
            rank = {"authorization": 0, "api-key": 1, "x-api-key": 1}.get(name, 2)
            found.append((rank, secret))
    if found:
        return min(found)[1]
    from_url = url_credentials(url) if url else []
    return from_url[0] if from_url else None


def credentials_in(headers: object, url: str = "", body: str | bytes | None = None) -> list[str]:
    """Every credential a request carries, not only the one it is keyed by: each credential header's secret, the
    URL's password and credential query values, and the body's credential-named fields (``client_secret=``)."""
    items = getattr(headers, "items", None)
    found: list[str] = []
    for name, value in items() if items is not None else ():
        value = value[0] if isinstance(value, list) and value else value
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        secret = header_credential(str(name), value) if isinstance(value, str) else None
        if secret:
            found.append(secret)
            if str(name).lower() == "cookie":  # each cookie's value is a secret on its own too
                found += [v.strip() for _, _, v in (c.partition("=") for c in secret.split(";")) if v.strip()]
    return found + (url_credentials(url) if url else []) + body_credentials(body)
