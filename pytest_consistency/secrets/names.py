"""Credential names and shapes: which header, query parameter or field name says credential, which value looks like one.

One set of rules serves every place a secret could leak: cassettes (headers, query strings, URLs, bodies), call
records, the JSON report, the terminal and error messages. A fixed list of header names is not enough (gateways
invent their own: ``helicone-auth``, ``x-portkey-api-key``), so a header, query parameter or JSON field is a
credential when a *word* of its name says so (``auth``, ``key``, ``token``, ``secret``, ...), and a value is a
credential when it has the shape of one (``Bearer ...``, ``Basic ...``, ``sk-...`` with digits, other providers'
key prefixes). Words, not substrings: ``x-ratelimit-remaining-tokens`` and ``risk-assessment`` are not secrets.

Names are judged case-insensitively as sent: httpx lowercases ``X-MasterKey`` to ``x-masterkey``, requests keeps
``X-TOKEN``; a name is split on separators, then on case changes, and each part is also searched for compounds
written without separators (``masterkey``, ``csrftoken``).

The secrets known by value are searched for by :mod:`~pytest_consistency.secrets.literals`; URLs, forms, multipart
and JSON bodies, and whole report structures are taken apart by :mod:`~pytest_consistency.secrets.structures`.
"""

from __future__ import annotations

import base64
import functools
import re

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
        "authz",
        "authn",
        "passphrase",
        "sessionid",
        "sessid",
        "jsessionid",
        "phpsessid",
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
#: Compound words people write without separators, searched for in each part of a name, lowercased.
_COMPOUND = re.compile(
    r"(api|access|auth|refresh|session|secret|private|client|subscription|master|admin|bearer|csrf|xsrf|id|app|"
    r"user|service|signing|encryption|license|upstream|proxy|gateway|virtual|pass)(key|token|secret|word|phrase)"
)

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
#: Credential words a name part may end with when written as one word, as httpx records ``X-VaultToken``
#: (``x-vaulttoken``) or ``X-GatewayKey``: whatever prefixes them. A plural (``tokens``) is never one: rate-limit
#: headers count tokens (``x-ratelimit-remaining-tokens``, ``anthropic-ratelimit-input-tokens-remaining``).
_SECRET_SUFFIX = re.compile(
    r"(?:token|secret|password|passwd|passphrase|credentials?|apikey|key|auth|authorization|signature|session|"
    r"sessionid|cookie|jwt)\Z"
)
#: Words that end like a credential word and are not one (Portkey's gateway names every header ``x-portkey-*``).
_ORDINARY_ENDINGS = frozenset(
    {
        "monkey",
        "donkey",
        "turkey",
        "turnkey",
        "jockey",
        "hockey",
        "whiskey",
        "lackey",
        "hokey",
        "pokey",
        "hotkey",
        "portkey",
    }
)
_SCHEMES = r"(?:Bearer|Basic|Token|Bot)\s+[A-Za-z0-9._~+/=\-]{8,}"
#: A credential-shaped string inside free text, delimited so that words such as ``risk-assessment`` never match.
KEY_LIKE = re.compile(r"(?<![A-Za-z0-9_\-])(?:" + "|".join(_KEY_SHAPES) + r")(?![A-Za-z0-9_\-])|" + _SCHEMES)
#: How every match of ``KEY_LIKE`` begins (each shape above, and each scheme). A text without any of these cannot
#: match it, and searching for them alone costs a fifth of ``KEY_LIKE``'s search, whose lookbehind is tried at every
#: position: 2.6 against 13.9 us for a replayed response body of 297 characters. Kept with the shapes: a test fails
#: when a shape is added that begins otherwise.
_KEY_START = re.compile(r"sk-|AIza|gh[pousr]_|hf_|AKIA|ASIA|xox[abprs]-|Bearer|Basic|Token|Bot")
#: Below this length ``KEY_LIKE`` alone is cheaper than the two searches.
_PREFILTER_FROM = 64


def redact_shapes(text: str) -> str:
    """``text`` with each credential-shaped string (``KEY_LIKE``) replaced by ``REDACTED``."""
    if len(text) >= _PREFILTER_FROM and _KEY_START.search(text) is None:
        return text
    return KEY_LIKE.sub(REDACTED, text)


_PARTS = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@functools.lru_cache(maxsize=4096)
def name_is_secret(name: str) -> bool:
    """``helicone-auth``, ``x-portkey-api-key``, ``access_token``, ``apiKey``, ``X-TOKEN``, ``x-masterkey``,
    ``x-vaulttoken``: yes; ``x-ratelimit-tokens``, ``MAX_TOKENS``, ``monkey``: no. Whatever the case the name was
    sent in."""
    lowered = name.lower()
    if lowered.startswith(OWN_PREFIX):
        return False
    for prefix in FORWARDED_PREFIXES:
        lowered = lowered.removeprefix(prefix)
    if lowered in SECRET_NAMES:
        return True
    for part in _PARTS.findall(name):
        lowered = part.lower()
        words = {lowered, *(word.lower() for word in _CAMEL.findall(part))}
        if words & SECRET_WORDS or _COMPOUND.search(lowered):
            return True
        # One word ending in a credential word (``x-vaulttoken``, ``x-tenantkey``), a trailing number aside.
        stem = lowered.rstrip("0123456789")
        if stem not in _ORDINARY_ENDINGS and _SECRET_SUFFIX.search(stem):
            return True
    return False


def value_is_secret(value: str) -> bool:
    return bool(KEY_LIKE.search(value))


#: Cached: an SDK sends the same dozen or so headers (user agent, its ``x-stainless-*`` set, the key) on every call,
#: and each call's scrub asks about each header twice; ids, dates and signatures differ per call, hence the bound.
@functools.lru_cache(maxsize=4096)
def header_credential(name: str, value: str) -> str | None:
    """The secret inside one header, if it is one: the token after ``Bearer``, else the whole value. An auth scheme
    is a credential in any case (``bearer``, ``BASIC``), whatever the header is called."""
    if not value:
        return None
    scheme, _, rest = value.strip().partition(" ")
    has_scheme = scheme.lower() in ("bearer", "basic", "token", "bot") and bool(rest.strip())
    if not (has_scheme or name_is_secret(name) or value_is_secret(value)):
        return None
    if scheme.lower() in ("bearer", "token", "bot") and rest.strip():
        return rest.strip()
    if scheme.lower() == "basic" and rest.strip():
        try:
            return base64.b64decode(rest.strip()).decode("utf-8", "replace").partition(":")[2] or rest.strip()
        except ValueError:
            return rest.strip()
    return value.strip()
