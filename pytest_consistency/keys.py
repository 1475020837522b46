"""API keys: a short one-way fingerprint is all that ever leaves this module."""

from __future__ import annotations

import hashlib
import re

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

#: Strings that look like secrets in bodies: OpenAI-style keys (masked ones included) and bearer tokens.
KEY_LIKE = re.compile(rb"(sk-[A-Za-z0-9_*\-]{8,}|Bearer\s+[A-Za-z0-9._~+/=\-]{8,})")


def fingerprint(key: str | None) -> str | None:
    """``sha256:`` and 8 hex digits: enough to tell keys apart, useless for recovering one."""
    if not key:
        return None
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]


def is_placeholder(key: str) -> bool:
    text = key.strip().lower()
    return text in PLACEHOLDERS or text.startswith("your") or ("xxxx" in text and len(set(text)) <= 5)


def credential_of(headers: object) -> str | None:
    """The key a request actually carries, from ``Authorization: Bearer`` or ``api-key``."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    auth = get("authorization") or ""
    if auth.lower().startswith("bearer "):
        return str(auth[7:].strip()) or None
    api_key = get("api-key") or get("x-api-key")
    return str(api_key) if api_key else None
