"""A judge sample's cassette: the source's exchanges that are not the judge's (``rejudge.cassettes``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_consistency.rejudge.cassettes import not_judged, role_of, sample_state
from pytest_consistency.resample.prefix import interactions, write_cassette


def exchange(text: str, role: str | None = None) -> dict[str, Any]:
    headers: dict[str, Any] = {"content-type": ["application/json"]}
    if role is not None:
        headers["X-Consistency-Role"] = [role]
    return {
        "request": {"method": "POST", "uri": "http://h/v1/chat/completions", "body": text, "headers": headers},
        "response": {"status": {"code": 200, "message": "OK"}, "body": {"string": text.upper()}},
    }


SOURCE = [exchange("plan"), exchange("user turn", "user"), exchange("judge it", "judge"), exchange("act")]


def test_roles_and_the_filtered_copy_keep_agent_and_user_in_order() -> None:
    assert [role_of(e) for e in SOURCE] == ["agent", "user", "judge", "agent"]
    assert not_judged(SOURCE) == [SOURCE[0], SOURCE[1], SOURCE[3]]


def test_written_yaml_and_json_read_back(tmp_path: Path) -> None:
    for name in ("a/judge-1.yaml", "b/judge-1.json"):
        path = tmp_path / name
        write_cassette(not_judged(SOURCE), path)
        assert interactions(path) == not_judged(SOURCE)
    assert json.loads((tmp_path / "b/judge-1.json").read_text())["version"] == 1
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_sample_is_complete_once_it_holds_a_judge_exchange_and_stale_when_the_source_changed(tmp_path: Path) -> None:
    replayed = not_judged(SOURCE)
    path = tmp_path / "judge-1.yaml"
    assert sample_state(replayed, path).state == "missing"
    write_cassette(replayed, path)
    assert sample_state(replayed, path).state == "missing"  # an interrupted sample: only the copy
    write_cassette([*replayed, exchange("judged again", "judge")], path)
    assert sample_state(replayed, path).state == "complete"
    changed = [replayed[0], exchange("another user turn", "user"), replayed[2]]
    assert (sample_state(changed, path).state, sample_state(changed, path).call) == ("stale", 2)
