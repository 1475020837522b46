"""Secrets known by value (the live keys, every credential seen on the wire), found and replaced literally.

They are searched for in every encoding a file can hold them: raw, JSON ``\\u``/``\\x`` escapes, URL escapes and
HTML character references (each character escaped or not), base64 (standard or URL-safe, at any offset of a blob)
alone or as basic auth. A credential is a secret whatever its length; a short one (under 8 characters) is matched as
a whole token only, so ``sk-1234`` is not found in ``sk-12345``, and one made of letters only or digits only
(``dummy``, ``1234``), which could be an ordinary word, only where it stands as a credential: after
``Bearer``/``Basic``/``Token`` or as the value of a credential-named field (``api_key=dummy``, ``"token": "1234"``).

One :class:`_Rule` per secret; :func:`redactor` compiles them once and adds the credential shapes of
:mod:`~pytest_consistency.secrets.names`; :func:`find_secret` is the pre-write scan, by the same rules.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote, unquote, unquote_plus

from pytest_consistency.secrets.names import REDACTED, redact_shapes

#: Secrets shorter than this are matched as whole tokens only (see the module docstring).
SHORT = 8
#: Characters a token is made of: a short secret must not be preceded or followed by one.
_TOKEN_CHARS = r"A-Za-z0-9_\-"
_B64_CHARS = r"A-Za-z0-9+/_\-"
#: Where a short secret that could be an ordinary word stands as a credential: after an auth scheme, or as the
#: value of a field whose name has a credential word (``api_key=``, ``"token": "``, ``X-TOKEN: ``).
_CREDENTIAL_CONTEXT = (
    r"(?:\b(?:Bearer|Basic|Token|Bot)\s+|"
    r"[A-Za-z0-9_\-]*(?i:key|token|secret|password|passwd|pwd|pass|auth|authorization|cookie|credentials?|"
    r"session|signature|sig|jwt)[\"']?\s*[=:]\s*[\"']?)"
)


def _b64_forms(data: bytes) -> set[str]:
    """The base64 of ``data`` wherever it starts in a blob: for each of the three alignments, the characters that
    encode only ``data``'s bytes (those shared with the bytes around it differ from blob to blob)."""
    forms = set()
    for offset in range(3):
        total = offset + len(data)
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * offset + data).decode()
            forms.add(encoded[4 if offset else 0 : 4 * (total // 3)])
    return forms


@functools.lru_cache(maxsize=256)
def secret_forms(secret: str) -> tuple[str, ...]:
    """Literal ways a secret can appear in a file: raw, JSON- and URL-escaped, base64 (alone, at any offset of a
    blob, URL-safe, or as basic auth). Escapes of single characters are matched by :func:`_escaped` instead."""
    data = secret.encode()
    forms = {
        secret,
        json.dumps(secret, ensure_ascii=False)[1:-1],  # quotes and backslashes escaped, other characters as they are
        json.dumps(secret, ensure_ascii=True)[1:-1],
        quote(secret, safe=""),
        base64.b64encode(data).decode().rstrip("="),
        base64.urlsafe_b64encode(data).decode().rstrip("="),
    }
    for basic in (f":{secret}", f"{secret}:", f"api:{secret}"):
        forms.add(base64.b64encode(basic.encode()).decode().rstrip("="))
    if len(secret) >= SHORT:
        forms |= _b64_forms(data)
    minimum = SHORT if len(secret) >= SHORT else 4
    return tuple(sorted((f for f in forms if len(f) >= minimum), key=lambda f: (-len(f), f)))


def _hex(number: int, width: int) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in f"{number:0{width}x}")


def _escaped(secret: str) -> str:
    """A pattern for ``secret`` with any of its characters written as a URL escape (``%73``), a JSON or Python
    escape (``\\u0073``, ``\\x73``) or an HTML character reference (``&#115;``, ``&#x73;``), or as itself."""
    parts = []
    for char in secret:
        code = ord(char)
        options = [re.escape(char), rf"\\u{_hex(code, 4)}", rf"&#0*{code};", rf"&#[xX]0*{_hex(code, 1)};"]
        if code < 256:
            options += [rf"%{_hex(code, 2)}", rf"\\x{_hex(code, 2)}"]
        if char == "/":
            options.append(r"\\/")  # JSON writers may escape a slash
        parts.append("(?:" + "|".join(options) + ")")
    return "".join(parts)


#: Without one of these no character of a secret can be escaped in a text: the escaped pattern is skipped.
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|\\[ux/]|&#")


def has_escape(text: str) -> bool:
    return ("%" in text or "\\" in text or "&#" in text) and _ESCAPE.search(text) is not None


class _Rule:
    """How one known secret is found in text: literal forms (a fast check), and the pattern that replaces them."""

    def __init__(self, secret: str) -> None:
        forms = secret_forms(secret)
        #: Enough to tell whether a text may hold the secret: every other literal form contains one of these
        #: (the base64 of basic auth or of a whole value contains the core of its alignment).
        quick = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
        quick |= {f for f in _b64_forms(secret.encode()) if len(f) >= 4}
        self.quick = tuple(sorted(f for f in quick if f)) if len(secret) >= SHORT else (secret, *forms)
        literal = "|".join(re.escape(f) for f in forms)
        if len(secret) >= SHORT:
            self.escapes = True
            self.pattern = re.compile(f"{literal}|{_escaped(secret)}")
            self.context = False
        elif secret.isalpha() or secret.isdigit():  # could be an ordinary word or number: only as a credential
            self.escapes = False
            bounded = rf"(?<![{_TOKEN_CHARS}])(?:{re.escape(secret)})(?![{_TOKEN_CHARS}])"
            self.pattern = re.compile(f"({_CREDENTIAL_CONTEXT}){bounded}")
            self.context = True
        else:  # a whole token: raw or escaped among text, its base64 among base64 characters
            self.escapes = True
            encoded = "|".join(re.escape(f) for f in forms if f not in (secret, quote(secret, safe="")))
            raw = rf"(?<![{_TOKEN_CHARS}])(?:{_escaped(secret)})(?![{_TOKEN_CHARS}])"
            b64 = rf"|(?<![{_B64_CHARS}])(?:{encoded})(?![{_B64_CHARS}])" if encoded else ""
            self.pattern = re.compile(raw + b64)
            self.context = False

    def applies(self, text: str, escaped: bool | None = None) -> bool:
        """Whether the pattern could match: a literal form is in the text, or it has an escape of a character."""
        if any(form in text for form in self.quick):
            return True
        if not self.escapes:
            return False
        return has_escape(text) if escaped is None else escaped

    def sub(self, text: str) -> str:
        if self.context:
            return self.pattern.sub(lambda m: m.group(1) + REDACTED, text)
        return self.pattern.sub(REDACTED, text)

    def search(self, text: str) -> str | None:
        match = self.pattern.search(text) if self.applies(text) else None
        return None if match is None else match.group(0)


@functools.lru_cache(maxsize=64)
def _rules_for(secrets: tuple[str, ...]) -> tuple[_Rule, ...]:
    return tuple(_Rule(secret) for secret in secrets)


def rules(secrets: Iterable[str]) -> tuple[_Rule, ...]:
    """The rules of ``secrets``, longest first (a secret that contains another is replaced whole), compiled once."""
    unique = {secret for secret in secrets if secret and secret.strip()}
    return _rules_for(tuple(sorted(unique, key=lambda s: (-len(s), s))))


@functools.lru_cache(maxsize=64)
def _any_form(compiled: tuple[_Rule, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(form) for rule in compiled for form in rule.quick))


def redactor(secrets: Iterable[str] = (), shapes: bool = True) -> Callable[[str], str]:
    """A function that redacts text: the known ``secrets`` (compiled once), and with ``shapes`` credential-shaped
    strings too."""
    compiled = rules(secrets)
    if not compiled:
        return redact_shapes if shapes else (lambda text: text)
    # One search for every literal form of every secret: most texts hold none and no escape, and are done.
    maybe = _any_form(compiled).search

    def known(text: str) -> str:
        escaped = has_escape(text)
        if not escaped and maybe(text) is None:
            return text
        for rule in compiled:
            if rule.applies(text, escaped):
                text = rule.sub(text)
                escaped = has_escape(text)
        return text

    if not shapes:
        return known
    return lambda text: redact_shapes(known(text))


def redact_known(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace the known ``secrets`` (any length, every encoding); credential shapes are left to ``redact_text``."""
    return redactor(secrets, shapes=False)(text)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace known secrets (every encoding) and credential-shaped strings in free text."""
    return redactor(secrets)(text)


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
    """The first secret found anywhere in ``data`` (strings, bytes, nested structures), in any encoding, by the
    same rules redaction uses (a short secret as a whole token)."""
    secrets = [secret for secret in secrets if secret and secret.strip()]
    compiled = rules(secrets)
    if not compiled:
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
                for rule in compiled:
                    found = rule.search(variant)
                    if found is not None:
                        return (
                            "the raw secret"
                            if found in secrets or found.endswith(tuple(secrets))
                            else ("an encoded form of a secret")
                        )
    return None
