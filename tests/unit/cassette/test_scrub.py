"""The request scrub is remembered across repetitions (``scrub._SCRUBBED``): what may not go wrong with that.

Every repetition of a task sends the same first request, so its scrubbed form is computed once per session. The
memo must never cost a secret: a repetition answered from it still learns every secret the request carries (its
pre-write scan and the session's outputs redact them), and a result computed while other secrets were known is not
reused where they are not, nor the other way round.
"""

from __future__ import annotations

import pytest

from pytest_consistency.capture.wire import RECORDED_KEY_HEADER, ROUTE_KEY_HEADER
from pytest_consistency.cassette import scrub
from pytest_consistency.cassette.replay import Request
from pytest_consistency.cassette.scrub import Scrubber
from pytest_consistency.secrets.names import header_credential

KEY = "sk-proj-memo0123456789abcdefghijklmnop"
OTHER = "sk-proj-other9876543210zyxwvutsrqpon"


def request(body: str = '{"model": "m", "messages": []}', url: str = "https://api.example/v1/chat") -> Request:
    headers = {"authorization": f"Bearer {KEY}", "user-agent": "OpenAI/Python 9", "x-stainless-retry-count": "0"}
    return Request("POST", url, body, headers)


@pytest.fixture(autouse=True)
def empty_memo() -> None:
    scrub._SCRUBBED.clear()


def test_a_second_repetition_answered_from_the_memo_still_learns_the_key() -> None:
    first, second = Scrubber(None), Scrubber(None)
    a = first.filter(request())
    b = second.filter(request())
    assert len(scrub._SCRUBBED) == 1, "the second repetition scrubbed the same request again"
    assert KEY in second.secrets, "the memo hid the key from the second repetition's pre-write scan"
    assert (a.uri, a.body, a.headers) == (b.uri, b.body, b.headers)
    assert "authorization" not in b.headers and b.headers[RECORDED_KEY_HEADER].startswith("sha256:")


def test_secrets_known_before_the_request_are_part_of_what_decides_it() -> None:
    """A body quoting a secret the repetition saw earlier is redacted only there: never served the other way."""
    body = f'{{"model": "m", "note": "{OTHER}"}}'.replace("sk-proj-", "plain-")  # not key-shaped by itself
    plain = OTHER.replace("sk-proj-", "plain-")
    aware = Scrubber(None)
    aware.secrets.add(plain)
    unaware = Scrubber(None)
    redacted = aware.filter(request(body)).body
    kept = unaware.filter(request(body)).body
    assert plain.encode() not in redacted, "a secret the repetition had seen went into its cassette"
    assert plain.encode() in kept, "a result computed with another repetition's secrets was served to this one"
    again = Scrubber(None)
    again.secrets.add(plain)
    assert plain.encode() not in again.filter(request(body)).body


def test_route_key_fingerprints_are_part_of_what_decides_it() -> None:
    one = Scrubber(None, route_keys={"openai": "sha256:aaaa"}).filter(request())
    two = Scrubber(None, route_keys={"openai": "sha256:bbbb"}).filter(request())
    assert one.headers.get(ROUTE_KEY_HEADER) != two.headers.get(ROUTE_KEY_HEADER)


def test_the_memo_stays_bounded_over_many_distinct_requests() -> None:
    scrubber = Scrubber(None)
    for i in range(500):
        scrubber.filter(request(f'{{"model": "m", "i": {i}}}'))
    assert len(scrub._SCRUBBED) <= 64


def test_header_answers_are_the_same_from_the_memo() -> None:
    for _ in range(2):
        assert header_credential("Authorization", f"Bearer {KEY}") == KEY
        assert header_credential("user-agent", "OpenAI/Python 9") is None
        assert header_credential("x-api-key", "short") == "short"


def test_redacting_strings_with_a_generator_of_secrets_still_redacts_them() -> None:
    """The memo for the no-secret case asks whether there are secrets first: a generator must not be used up."""
    from pytest_consistency.secrets.structures import redact_strings

    data = {"a": f"token {OTHER.replace('sk-proj-', 'plain-')}", "b": ["plain", "x"]}
    secret = OTHER.replace("sk-proj-", "plain-")
    out = redact_strings(data, (s for s in [secret]))
    assert secret not in str(out), out
    assert redact_strings(data, ()) == data  # nothing key-shaped, nothing known: unchanged, from the memo too
    assert redact_strings(data, ()) == data
