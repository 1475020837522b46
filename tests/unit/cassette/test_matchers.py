"""The matchers a replay compares a live request with a recorded one by (cassette.matchers), on vcrpy's own request
objects: the body digests as sent, the bodies themselves for cassettes without digests, the bodies as the match rules
leave them, and the key fingerprints; a mismatch says where the bodies first differ."""

from __future__ import annotations

import json
from typing import Any

import pytest
from vcr.request import Request

from pytest_consistency.capture.wire import BODY_DIGEST_HEADER, RECORDED_KEY_HEADER
from pytest_consistency.cassette.match_rules import MatchRules, compile_rules
from pytest_consistency.cassette.matchers import body_matcher, match_body, match_key

URL = "http://127.0.0.1:9/v1/chat/completions"
NONE = MatchRules()


def request(body: Any, **headers: str) -> Request:
    text = body if isinstance(body, str) else json.dumps(body)
    return Request("POST", URL, text.encode(), {name.replace("_", "-"): value for name, value in headers.items()})


def digest(value: str) -> dict[str, str]:
    return {BODY_DIGEST_HEADER.replace("-", "_"): value}


def test_the_digests_decide_when_both_requests_carry_one() -> None:
    # the bodies differ, the digests (of the bodies as sent, before redaction) agree: the digests decide
    match_body(request({"n": 1}, **digest("sha256:aa")), request({"n": 2}, **digest("sha256:aa")), NONE)
    with pytest.raises(AssertionError, match=r"request bodies differ \(model, prompt or parameters changed\)"):
        match_body(request({"n": 1}, **digest("sha256:aa")), request({"n": 1}, **digest("sha256:bb")), NONE)


def test_without_digests_the_bodies_are_compared_as_json() -> None:
    match_body(request('{"model": "m", "n": 1}'), request('{"n":1,"model":"m"}'), NONE)
    match_body(request("not json"), request("not json"), NONE)
    with pytest.raises(AssertionError, match="request bodies differ"):
        match_body(request("not json"), request("not json either"), NONE)
    with pytest.raises(AssertionError, match="model"):
        match_body(request({"model": "m-2"}), request({"model": "m-1"}), NONE)


def test_the_match_rules_compare_the_bodies_as_they_leave_them_whatever_the_digests() -> None:
    rules = compile_rules(("metadata.run",))
    live = request({"model": "m", "metadata": {"run": "b"}}, **digest("sha256:bb"))
    recorded = request({"model": "m", "metadata": {"run": "a"}}, **digest("sha256:aa"))
    match_body(live, recorded, rules)
    with pytest.raises(AssertionError, match="request bodies differ"):
        match_body(request({"model": "m-2", "metadata": {"run": "b"}}), recorded, rules)


def test_the_bound_matcher_keeps_the_name_vcrpy_reports_it_by() -> None:
    matcher = body_matcher(compile_rules(("metadata.run",)))
    assert matcher.__name__ == "match_body"
    matcher(request({"metadata": {"run": "b"}}), request({"metadata": {"run": "a"}}))
    with pytest.raises(AssertionError):
        body_matcher(NONE)(request({"metadata": {"run": "b"}}), request({"metadata": {"run": "a"}}))


def test_key_fingerprints_differ_only_when_both_requests_carried_one() -> None:
    key = RECORDED_KEY_HEADER.replace("-", "_")
    match_key(request({}, **{key: "sha256:aa"}), request({}, **{key: "sha256:aa"}))
    match_key(request({}), request({}, **{key: "sha256:aa"}))
    match_key(request({}, **{key: "sha256:aa"}), request({}))
    with pytest.raises(AssertionError, match="key fingerprint differs") as refused:
        match_key(request({}, **{key: "sha256:aa"}), request({}, **{key: "sha256:bb"}))
    # vcrpy passes the request sent now first, the recorded one second: the message must not swap them
    assert "sha256:bb recorded, sha256:aa now" in str(refused.value)
