"""API keys (``secrets.keys``): which credential a request carries, and key problems that never show the key."""

from __future__ import annotations

import pytest

from pytest_consistency.secrets.keys import credential_of, key_problem

KEY = "sk-test-unit-key-0123456789abcdef"


def test_credential_of_prefers_authorization_then_any_credential_header_then_the_url() -> None:
    assert credential_of({"authorization": f"Bearer {KEY}", "helicone-auth": "Bearer other-123456"}) == KEY
    assert credential_of({"x-portkey-api-key": "pk-secret-1"}) == "pk-secret-1"
    assert credential_of({}, "http://h/v1/x?key=from-query-1") == "from-query-1"


@pytest.mark.parametrize("key", [KEY + "\n", " " + KEY, KEY[:10] + " " + KEY[10:], KEY + "\u201d"])
def test_key_problems_never_show_the_key(key: str) -> None:
    problem = key_problem(key)
    assert problem and KEY[:12] not in problem
    assert key_problem(KEY) is None


def test_every_credential_a_request_carries() -> None:
    from pytest_consistency.secrets.keys import credentials_in

    headers = {
        "Authorization": "Bearer sk-1234",
        "X-TOKEN": "tok-1",
        "COOKIE": "sid=ck-2; theme=dark",
        "content-type": "application/x-www-form-urlencoded",
        "x-ratelimit-remaining-tokens": "99",
    }
    found = credentials_in(headers, "http://u:pw-3@h/v1?TOKEN=q-4", "client_secret=f-5&scope=read")
    assert found == ["sk-1234", "tok-1", "sid=ck-2; theme=dark", "ck-2", "dark", "pw-3", "q-4", "f-5"]
