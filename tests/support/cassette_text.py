"""What a cassette holds as text, for the tests that look for a secret in it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml


def cassette_strings(path: Path) -> str:
    """Every string of a cassette as its loader reads it back (a folded YAML line no longer splits a value)."""
    data = yaml.safe_load(path.read_text()) if path.suffix == ".yaml" else json.loads(path.read_text())
    out: list[str] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, (str, bytes)):
            out.append(item if isinstance(item, str) else item.decode("utf-8", "replace"))
    return "\n".join(out)
