"""What a run costs, in US dollars, the same in every output, live, replayed, under ``-n 2`` and merged from shards;
a model with no price is said so, never priced at zero; the cost budget stops live calls, across workers too.

Real inner sessions (pytester) whose tests call the loopback OpenAI and Anthropic servers through the pinned clients
(``tests/support/fake_openai.py``: 7 prompt and 3 completion tokens a chat call; ``fake_anthropic.py``: the usage a
step scripts, cache reads and writes included), priced from ``prices:`` in consistency.yaml.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, Step
from fake_openai import FakeOpenAI
from suites import BOTH_ROUTES_TASK, anthropic_suite, cli, consistency_section, load_report

PRICES = """
prices:
  fake-model: {input: 150, output: 600, cached_input: 75}
  claude-test-model: {input: 3, output: 15, cached_input: 0.3, cache_write: 3.75}
"""
#: A chat call of the OpenAI fake: 7 x 150 + 3 x 600 dollars per million tokens.
OPENAI_CALL = 0.00285
#: The scripted Messages call: 100 x 3 + 1000 x 0.30 (cache reads) + 200 x 3.75 (cache writes) + 10 x 15, per million.
ANTHROPIC_CALL = 0.0015
ADDED = 0.01
#: Both routes once per repetition, and the tool's own price on the first repetition (``consistency.cost``).
TASK = BOTH_ROUTES_TASK.replace(
    "    consistency.record(",
    "    if consistency.repeat == 1:\n        consistency.cost(0.01)\n    consistency.record(",
)


def anthropic_steps(count: int) -> list[Step]:
    return [
        Step(
            text="alice",
            input_tokens=100,
            output_tokens=10,
            cache_read_input_tokens=1000,
            cache_creation_input_tokens=200,
        )
        for _ in range(count)
    ]


@pytest.fixture
def both(
    pytester: pytest.Pytester, fake: FakeOpenAI, claude: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """Two tasks of two repetitions, each calling both routes; prices in consistency.yaml."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makefile(".yaml", consistency=PRICES)
    pytester.makepyfile(
        test_agent=anthropic_suite(TASK.replace("test_task", "test_first") + TASK.replace("test_task", "test_second"))
    )
    return pytester


def session(pytester: pytest.Pytester, mode: str, report: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        f"--consistency-record={mode}",
        f"--consistency-report={report}",
        "--consistency-model=fake-model",
        "-p",
        "no:randomly",
        *args,
    )


def dollars(report: dict[str, Any]) -> Any:
    return (
        report["summary"]["cost"],
        [(t["task_id"], t["cost_usd"], t["unpriced_calls"]) for t in report["tasks"]],
        sorted((r["nodeid"], r["cost_usd"], r["added_cost_usd"]) for t in report["tasks"] for r in t["repetitions"]),
    )


def test_the_dollars_are_the_same_live_replayed_under_xdist_and_in_every_output(
    both: pytest.Pytester, fake: FakeOpenAI, claude: FakeAnthropic
) -> None:
    claude.script(*anthropic_steps(4))
    live = session(both, "all", "live.json", "--junitxml=junit.xml", "--consistency-md=summary.md")
    assert live.ret == 0, live.stdout.str()
    assert (len(fake.requests), len(claude.requests)) == (4, 4)
    report = load_report(both, "live.json")
    repetition = OPENAI_CALL + ANTHROPIC_CALL
    usd = math.fsum([OPENAI_CALL] * 4 + [ANTHROPIC_CALL] * 4 + [ADDED] * 2)
    cost = report["summary"]["cost"]
    assert cost == {
        "usd": usd,
        "calls_usd": math.fsum([OPENAI_CALL] * 4 + [ANTHROPIC_CALL] * 4),
        "added_usd": 2 * ADDED,
        "unpriced_calls": 0,
        "unpriced_models": [],
        "per_task": usd / 2,
        "per_repetition": usd / 4,
        "decided": 2,
        "per_decided_verdict": usd / 2,
        "prices_as_of": "2026-12-07",
    }
    calls = {c["provider"]: c["cost_usd"] for t in report["tasks"] for r in t["repetitions"] for c in r["calls"]}
    assert calls == {"openai": OPENAI_CALL, "anthropic": ANTHROPIC_CALL}
    first = report["tasks"][0]
    assert [r["cost_usd"] for r in first["repetitions"]] == [
        math.fsum([OPENAI_CALL, ANTHROPIC_CALL, ADDED]),
        repetition,
    ]
    assert first["cost_usd"] == math.fsum([OPENAI_CALL, ANTHROPIC_CALL, ADDED, OPENAI_CALL, ANTHROPIC_CALL])

    # The terminal, the Markdown summary, JUnit and the HTML page (show) say the same dollars.
    terminal = re.sub(r"\s+", " ", " ".join(consistency_section(live)))
    assert (
        "cost $0.0374, of which $0.02 added by tests: $0.0187 per task, $0.00935 per repetition, $0.0187 per "
        "decided verdict (2 decided)"
    ) in terminal
    markdown = (both.path / "summary.md").read_text()
    assert "**Cost** \\$0.0374, of which \\$0.02 added by tests" in markdown
    assert "(prices as of 2026-12-07)" in markdown
    suite = ET.parse(both.path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert float(properties["consistency.cost_usd"]) == usd
    assert float(properties["consistency.cost_usd.per_decided_verdict"]) == usd / 2
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    case = next(c for name, c in cases.items() if name and name.startswith("test_first") and name.endswith("1]"))
    per_case = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert float(per_case["consistency.cost_usd"]) == first["repetitions"][0]["cost_usd"]
    assert float(per_case["consistency.task.cost_usd"]) == first["cost_usd"]
    page = cli("show", "live.json", "--format", "html", cwd=both.path).stdout
    assert '<section id="cost"><h2>Cost</h2><p>cost $0.0374' in page

    # Replayed, serially and with -n 2: no call goes out, and the dollars are the recording's.
    fake.reset()
    claude.reset()
    assert session(both, "none", "replayed.json").ret == 0
    assert session(both, "none", "parallel.json", "-n", "2").ret == 0
    assert (fake.requests, claude.requests) == ([], [])
    assert dollars(load_report(both, "replayed.json")) == dollars(report)
    assert dollars(load_report(both, "parallel.json")) == dollars(report)

    # Shards merged: the unsharded run's dollars.
    for index in (1, 2):
        assert session(both, "none", f"shard{index}.json", f"--consistency-shard={index}/2").ret == 0
    merged = cli("merge", "shard1.json", "shard2.json", "-o", "merged.json", cwd=both.path)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert dollars(load_report(both, "merged.json")) == dollars(report)
    assert "cost $0.0374" in merged.stdout


def test_a_model_with_no_price_is_said_so_and_the_total_is_a_lower_bound(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nconsistency_record = off\n")
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, consistency):
    pinned_client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    consistency.cost(0.25)
"""
    )
    result = session(pytester, "off", "report.json", f"--consistency-base-url={fake.base_url}")
    assert result.ret == 0, result.stdout.str()
    cost = load_report(pytester)["summary"]["cost"]
    assert (cost["usd"], cost["unpriced_calls"], cost["unpriced_models"]) == (0.5, 2, ["fake-model"])
    text = re.sub(r"\s+", " ", " ".join(consistency_section(result)))
    assert "cost at least $0.50 (2 call(s) unpriced), of which $0.50 added by tests: at least $0.50 per task" in text
    assert "no price for model fake-model: add it under prices: in consistency.yaml" in text
    # --consistency-price gives it one.
    result = session(
        pytester,
        "off",
        "report.json",
        f"--consistency-base-url={fake.base_url}",
        "--consistency-price=fake-model=150,600",
    )
    cost = load_report(pytester)["summary"]["cost"]
    assert (cost["usd"], cost["unpriced_calls"]) == (math.fsum([OPENAI_CALL, OPENAI_CALL, 0.5]), 0)
    assert "no price" not in result.stdout.str()


ASK = """
import pytest

@pytest.mark.repeat_consistency(n={n})
def test_spend(pinned_client, consistency):
    consistency.cost({added})
    pinned_client.chat.completions.create(model="fake-model", messages=[{{"role": "user", "content": "hi"}}])
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_cost_budget_stops_live_calls_and_fails_the_session(
    pytester: pytest.Pytester, fake: FakeOpenAI, workers: tuple[str, ...]
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nconsistency_record = off\n")
    pytester.makepyfile(test_agent=ASK.format(n=6, added=0))
    args = (f"--consistency-base-url={fake.base_url}", "--consistency-price=fake-model=150,600")
    result = session(pytester, "off", "report.json", *args, "--consistency-cost-budget=0.005", *workers)
    assert result.ret == 1
    # $0.00285 a call: the second one goes over $0.005 and every later call is refused before it is sent (a worker
    # may have checked the ledger before another's call was added: one more, at most, per other worker).
    assert 2 <= len(fake.requests) <= 2 + (len(workers) and 1)
    report = load_report(pytester)
    budget = report["summary"]["run"]["cost_budget"]
    assert budget["limit"] == 0.005 and budget["spent"] == pytest.approx(OPENAI_CALL * len(fake.requests))
    refused = [r for t in report["tasks"] for r in t["repetitions"] if r["infrastructure"]]
    assert refused and all(r["infrastructure"].startswith("cost budget refused a call") for r in refused)
    assert all(c["error"] == "cost_budget" for r in refused for c in r["calls"])
    # what was spent: two calls ($0.0057), or three when another worker's call raced the ledger
    spent = f"${OPENAI_CALL * len(fake.requests):.6g}"
    result.stdout.fnmatch_lines([f"*cost budget exceeded: {spent}* spent > --consistency-cost-budget=0.005*"])


def test_a_cost_the_test_adds_counts_against_the_budget(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nconsistency_record = off\n")
    pytester.makepyfile(test_agent=ASK.format(n=2, added=1.0))
    result = session(
        pytester, "off", "report.json", f"--consistency-base-url={fake.base_url}", "--consistency-cost-budget=0.5"
    )
    assert result.ret == 1
    assert fake.requests == []  # the tool's $1 used the budget up before the first call
    assert load_report(pytester)["summary"]["run"]["cost_budget"]["spent"] == 2.0


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_cost_added_in_a_fixtures_teardown_counts_for_its_repetition(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    """A tool's bill is often known only when the fixture that holds the tool closes: what its teardown adds with
    ``consistency.cost`` belongs to that repetition, serially and from an xdist worker."""
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.fixture
def tool(consistency):
    yield
    consistency.cost(0.125 * consistency.repeat)

@pytest.mark.repeat_consistency(n=3)
def test_task(tool, consistency):
    consistency.record("same")
"""
    )
    result = session(pytester, "off", "report.json", *workers)
    assert result.ret == 0, result.stdout.str()
    report = load_report(pytester)
    (task,) = report["tasks"]
    assert [(r["repeat"], r["added_cost_usd"], r["cost_usd"]) for r in task["repetitions"]] == [
        (1, 0.125, 0.125),
        (2, 0.25, 0.25),
        (3, 0.375, 0.375),
    ]
    assert task["cost_usd"] == 0.75 and report["summary"]["cost"]["added_usd"] == 0.75
