"""Credentials, recognised by rule and replaced before anything is written or shown.

One set of rules serves every place a secret could leak: cassettes (headers, query strings, URLs, bodies), call
records, the JSON report, the terminal and error messages. A fixed list of header names is not enough (gateways
invent their own: ``helicone-auth``, ``x-portkey-api-key``), so a header, query parameter or JSON field is a
credential when a *word* of its name says so (``auth``, ``key``, ``token``, ``secret``, ...), and a value is a
credential when it has the shape of one (``Bearer ...``, ``Basic ...``, ``sk-...`` with digits, other providers'
key prefixes). Words, not substrings: ``x-ratelimit-remaining-tokens`` and ``risk-assessment`` are not secrets.

Names are judged case-insensitively as sent: httpx lowercases ``X-MasterKey`` to ``x-masterkey``, requests keeps
``X-TOKEN``; a name is split on separators, then on case changes, and each part is also searched for compounds
written without separators (``masterkey``, ``csrftoken``).

The live keys and every credential seen on the wire are also searched for literally, in every encoding a file can
hold them: raw, JSON ``\\u``/``\\x`` escapes, URL escapes and HTML character references (each character escaped
or not), base64 (standard or URL-safe, at any offset of a blob) alone or as basic auth. A credential is a secret
whatever its length; a short one (under 8 characters) is matched as a whole token only, so ``sk-1234`` is not
found in ``sk-12345``, and one made of letters only or digits only (``dummy``, ``1234``), which could be an
ordinary word, only where it stands as a credential: after ``Bearer``/``Basic``/``Token`` or as the value of a
credential-named field (``api_key=dummy``, ``"token": "1234"``).
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable, Iterable
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


def _memoised(redact: Callable[[str], str]) -> Callable[[str], str]:
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
    redact = _memoised(redactor(secrets)) if rules(secrets) else _shapes_only
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
