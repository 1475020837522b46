"""An agent sample's cassette: the source's simulated-user turns, then the agent's new exchanges
(``rejudge.script``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_consistency.rejudge.script import script_state, user_turns
from pytest_consistency.resample.prefix import write_cassette


def exchange(text: str, role: str | None = None) -> dict[str, Any]:
    headers: dict[str, Any] = {"content-type": ["application/json"]}
    if role is not None:
        headers["X-Consistency-Role"] = [role]
    return {
        "request": {"method": "POST", "uri": "http://h/v1/chat/completions", "body": text, "headers": headers},
        "response": {"status": {"code": 200, "message": "OK"}, "body": {"string": text.upper()}},
    }


SOURCE = [
    exchange("hello", "user"),
    exchange("answer 1"),
    exchange("more", "user"),
    exchange("answer 2"),
    exchange("judge it", "judge"),
]


def test_the_script_is_the_users_turns_in_order() -> None:
    assert user_turns(SOURCE) == [SOURCE[0], SOURCE[2]]
    assert user_turns([exchange("agent only")]) == []


def test_a_sample_is_complete_once_it_holds_an_agent_exchange_and_stale_when_the_user_changed(tmp_path: Path) -> None:
    script = user_turns(SOURCE)
    path = tmp_path / "agent-1.yaml"
    assert script_state(script, path).state == "missing"
    write_cassette(script, path)
    assert script_state(script, path).state == "missing"  # an interrupted sample: only the copy
    write_cassette([*script, exchange("answer 1, again"), exchange("answer 2, again")], path)
    assert script_state(script, path).state == "complete"
    changed = [script[0], exchange("less", "user")]
    assert (script_state(changed, path).state, script_state(changed, path).call) == ("stale", 2)
    shorter = script[:1]
    assert (script_state(shorter, path).state, script_state(shorter, path).call) == ("stale", 2)
