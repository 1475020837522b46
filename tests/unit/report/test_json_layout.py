"""``formats.json_layout``: the report's text parses to exactly its data; records deep down are one line each."""

from __future__ import annotations

import json
import math
import random

import pytest

from pytest_consistency.report.json_layout import LINE_DEPTH, layout


def report_like() -> dict:
    call = {
        "method": "POST",
        "url": "http://127.0.0.1/v1/chat/completions",
        "decision": {"text": "", "tool_calls": [{"name": "search", "arguments": '{"q": "m\\u00e4rz"}'}], "stop": None},
        "asked": [{"role": "tool", "content": 'line one\nline "two"\ttab \u2713 \U0001f600', "call_id": "c1"}],
        "latency_ms": 12.5,
        "retries": 0,
    }
    repetition = {"repeat": 1, "outcome": "passed", "calls": [call, dict(call, retries=2)], "notes": []}
    task = {
        "task_id": "tests/test_a.py::test_task[1]",
        "outcomes": ["passed", "failed", None],
        "repetitions": [repetition, dict(repetition, repeat=2, calls=[])],
        "trajectory": {"tree": [{"id": 0, "parent": None, "repeats": [1, 2]}], "distinct": [1, 2]},
        "drift": {},
    }
    return {"schema": "s/3", "summary": {"gap_pp": 7.5, "passed": True, "gates": []}, "tasks": [task, task]}


def test_the_text_parses_to_exactly_the_data() -> None:
    data = report_like()
    assert json.loads(layout(data)) == data
    assert json.loads(layout(data)) == json.loads(json.dumps(data, indent=2))


def test_random_nestings_round_trip() -> None:
    rng = random.Random(20)

    def value(depth: int):
        kind = rng.randrange(9 if depth < 9 else 5)
        if kind == 0:
            return rng.choice([None, True, False])
        if kind == 1:
            return rng.randrange(-(10**20), 10**20)
        if kind == 2:
            return rng.uniform(-1e9, 1e9)
        if kind in (3, 4):
            return "".join(rng.choice('ab"\\\n\u00e9\u2713\U0001f600/') for _ in range(rng.randrange(6)))
        if kind in (5, 6):
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {f'k{i}\n"': value(depth + 1) for i in range(rng.randrange(4))}

    for _ in range(300):
        data = value(0)
        assert json.loads(layout(data)) == data


def test_above_the_line_depth_it_is_indent_2_and_deeper_records_are_one_line_each() -> None:
    text = layout(report_like())
    lines = text.splitlines()
    assert lines[0] == "{" and lines[1] == '  "schema": "s/3",'
    # A call record (depth 6) is one line, which parses alone.
    calls = [line.strip().rstrip(",") for line in lines if line.strip().startswith('{"method"')]
    assert len(calls) == 4 and all(json.loads(c)["method"] == "POST" for c in calls)
    # A repetition's fields are one per line; lists of plain values are one line.
    assert '          "repeat": 1,' in lines
    assert '      "outcomes": ["passed", "failed", null],' in lines
    assert any(line.strip() == '"repeats": [1, 2]' for line in lines)
    assert '      "drift": {}' in lines  # empty containers as indent=2 writes them


def test_every_depth_is_honoured() -> None:
    nested: object = {"leaf": {"x": [{"y": 1}]}}
    for _ in range(LINE_DEPTH + 2):
        nested = {"down": [nested]}
    text = layout(nested)
    deepest = max(len(line) - len(line.lstrip()) for line in text.splitlines())
    assert deepest == LINE_DEPTH * 2  # nothing is indented past the line depth
    assert json.loads(text) == nested
    assert layout(nested, line_depth=0) == json.dumps(nested)


def test_non_string_keys_are_converted_as_json_dumps_converts_them() -> None:
    data = {"tasks": [{2: "a", None: "b", True: "c", 1.5: "d"}]}
    assert json.loads(layout(data)) == json.loads(json.dumps(data))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_number_is_refused_at_any_depth(bad: float) -> None:
    for data in (bad, {"summary": {"gap_pp": bad}}, {"a": [[[[[[[bad]]]]]]]}):
        with pytest.raises(ValueError, match="not JSON compliant"):
            layout(data)
