"""What a replay compares in a request body, how a user tunes it, and where two bodies first differ.

Why: a replay matches a request on its body, so that another model or prompt never gets the old answer. But a
prompt that holds a timestamp, a random id or a request counter differs at every run and can never replay. Users
declare what is not part of the question (``--consistency-match-ignore``, YAML ``cassettes.match_ignore``):

- a JSON path, dotted, ``*`` for any key or index: ``metadata.request_id``, ``messages.*.name`` (the field is
  left out of the comparison wherever the path reaches);
- a pattern, ``re:`` then a regular expression: every match in any string of the body is replaced by
  ``<ignored>`` before comparing (``re:\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z?`` for ISO timestamps);

and the ``pytest_consistency_normalize_request`` hook does the rest (return the body to compare). When a body
still differs, :func:`first_difference` says where, so a mismatch names ``messages[0].content`` with both values
instead of "differs in: body". Pure functions; the bodies they see are already redacted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

IGNORED = "<ignored>"
#: How much of each differing value a mismatch message shows.
SHOWN = 120

Normalizer = Callable[[Any, str], Any]


@dataclass(frozen=True)
class MatchRules:
    """What request matching ignores: JSON paths, text patterns and the normalising hook."""

    paths: tuple[tuple[str, ...], ...] = ()
    patterns: tuple[re.Pattern[str], ...] = ()
    #: The ``pytest_consistency_normalize_request`` hook, when a conftest implements it.
    hook: Normalizer | None = None
    #: A request's scheme, host and port are left out of matching (``--consistency-replay-any-host``): only its path
    #: and query are compared with the recorded URL's.
    any_host: bool = False

    @property
    def active(self) -> bool:
        return bool(self.paths or self.patterns or self.hook)


def compile_rules(rules: tuple[str, ...], hook: Normalizer | None = None, any_host: bool = False) -> MatchRules:
    paths = tuple(tuple(rule.split(".")) for rule in rules if not rule.startswith("re:"))
    patterns = tuple(re.compile(rule[3:]) for rule in rules if rule.startswith("re:"))
    return MatchRules(paths, patterns, hook, any_host)


def without_host(uri: str) -> str:
    """A URL's path and query, what ``any_host`` matching compares (``http://127.0.0.1:41234/v1/chat/completions``
    and ``https://api.openai.com/v1/chat/completions`` are the same request)."""
    _, separator, rest = uri.partition("://")
    if not separator:
        return uri
    slash = rest.find("/")
    return rest[slash:] if slash >= 0 else "/"


def _drop(value: Any, path: tuple[str, ...]) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        keys = list(value) if head == "*" else [head] if head in value else []
        if not rest:
            return {k: v for k, v in value.items() if k not in keys}
        return {k: (_drop(v, rest) if k in keys else v) for k, v in value.items()}
    if isinstance(value, list):
        indexes = (
            range(len(value)) if head == "*" else [int(head)] if head.isdecimal() and int(head) < len(value) else []
        )
        if not rest:
            return [v for i, v in enumerate(value) if i not in indexes]
        return [(_drop(v, rest) if i in indexes else v) for i, v in enumerate(value)]
    return value


def _mask(value: Any, patterns: tuple[re.Pattern[str], ...]) -> Any:
    if isinstance(value, str):
        for pattern in patterns:
            value = pattern.sub(IGNORED, value)
        return value
    if isinstance(value, dict):
        return {k: _mask(v, patterns) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, patterns) for v in value]
    return value


def parse_body(body: Any) -> Any:
    """A request body as JSON when it is JSON, else its text (None for no body)."""
    if body is None or body == b"" or body == "":
        return None
    raw = body.decode("utf-8", "replace") if isinstance(body, (bytes, bytearray)) else str(body)
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def normalise(body: Any, rules: MatchRules, url: str = "") -> Any:
    """The body as compared: ignored paths left out, ignored patterns masked, then the hook's say."""
    for path in rules.paths:
        body = _drop(body, path)
    if rules.patterns:
        body = _mask(body, rules.patterns)
    if rules.hook is not None:
        changed = rules.hook(body, url)
        if changed is not None:
            body = changed
    return body


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def first_difference(recorded: Any, sent: Any, where: str = "") -> str | None:
    """Where two JSON values first differ, with both values shown (shortened); None when they are equal."""
    if isinstance(recorded, dict) and isinstance(sent, dict):
        for key in sorted(set(recorded) | set(sent), key=str):
            here = f"{where}.{key}" if where else str(key)
            if key not in recorded:
                return f"{here}: not recorded, sent {_shown(sent[key])}"
            if key not in sent:
                return f"{here}: recorded {_shown(recorded[key])}, not sent"
            found = first_difference(recorded[key], sent[key], here)
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(sent, list):
        for index, (a, b) in enumerate(zip(recorded, sent, strict=False)):
            found = first_difference(a, b, f"{where}[{index}]")
            if found:
                return found
        if len(recorded) != len(sent):
            return f"{where or 'body'}: {len(recorded)} items recorded, {len(sent)} sent"
        return None
    if recorded == sent and type(recorded) is type(sent):
        return None
    return f"{where or 'body'}: recorded {_shown(recorded)}, sent {_shown(sent)}"
