"""Hand edits that give one field of a cassette's interaction the wrong type, each with the field the refusal names.

Used by the unit test of the persister (every edit, in YAML and JSON: ``tests/unit/cassette/test_persist.py``) and
by the end-to-end case of a replay that meets one (``tests/integration/cassette/test_corrupt_cassette_fields.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

Edit = Callable[[dict[str, Any]], None]


def _status(value: Any) -> Edit:
    def edit(interaction: dict[str, Any]) -> None:
        interaction["response"]["status"]["code"] = value

    return edit


def _set(where: str, name: str, value: Any) -> Edit:
    def edit(interaction: dict[str, Any]) -> None:
        interaction[where][name] = value

    return edit


def _header(value: Any) -> Edit:
    def edit(interaction: dict[str, Any]) -> None:
        interaction["response"]["headers"]["content-type"] = value

    return edit


def _message(interaction: dict[str, Any]) -> None:
    interaction["response"]["status"]["message"] = 404


def _no_message(interaction: dict[str, Any]) -> None:
    del interaction["response"]["status"]["message"]


def _body_string(interaction: dict[str, Any]) -> None:
    interaction["response"]["body"]["string"] = {"id": "chatcmpl-1"}


#: (what is broken, the edit, the field the message names)
CASES: dict[str, tuple[Edit, str]] = {
    "status code OK": (_status("OK"), "response.status.code"),
    "status code '200'": (_status("200"), "response.status.code"),
    "status code true": (_status(True), "response.status.code"),
    "status code 200.0": (_status(200.0), "response.status.code"),
    "status a number": (_set("response", "status", 200), "response.status"),
    "status message a number": (_message, "response.status.message"),
    "status message missing": (_no_message, "response.status.message"),
    "headers a list": (_set("response", "headers", ["content-type: application/json"]), "response.headers"),
    "header value a string": (_header("application/json"), "response.headers.content-type"),
    "header value a number": (_header([200]), "response.headers.content-type"),
    "body a string": (_set("response", "body", "{}"), "response.body"),
    "body string a mapping": (_body_string, "response.body.string"),
    "request body a number": (_set("request", "body", 42), "request.body"),
    "request method a number": (_set("request", "method", 1), "request.method"),
    "request uri a number": (_set("request", "uri", 42), "request.uri"),
    "request headers a list": (_set("request", "headers", ["accept: */*"]), "request.headers"),
}


def rewrite(path: Path, edit: Edit) -> None:
    """Apply ``edit`` to the first interaction of the cassette at ``path`` (YAML or JSON, by its suffix)."""
    text = path.read_text()
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    edit(data["interactions"][0])
    path.write_text(json.dumps(data, indent=4) if path.suffix == ".json" else yaml.safe_dump(data))
