"""The HTML report is a pure, self-contained, inert rendering of the summary.

Why these checks: the page is opened from disk and uploaded as a CI artifact, so it must fetch nothing and no
recorded answer may become markup or script; and it is compared byte for byte between the session and
``pytest-consistency show``, so it must be deterministic. Browser behaviour is tested in
tests/integration/report/test_html_report.py.
"""

from __future__ import annotations

import copy
import dataclasses
import html
import json
import re
from html.parser import HTMLParser
from typing import Any

from cause_summaries import SECRET as CAUSE_SECRET
from cause_summaries import cause_summary, redacted
from suites import records, route_settings

from pytest_consistency.analysis.cause.attribute import advice_lines
from pytest_consistency.analysis.summary import build_summary
from pytest_consistency.model.cause import Evidence
from pytest_consistency.model.records import CallRecord, RepetitionResult
from pytest_consistency.model.result import RouteSettings, RunFacts, SessionSummary
from pytest_consistency.report import builtin
from pytest_consistency.report.html import FORMAT, HtmlFormat, render
from pytest_consistency.report.html.data import breakable

HOSTILE = '</script><img src=x onerror="alert(1)"><!--<script>alert(2)</script>'
BASE = "http://127.0.0.1:8765/v1"


def route() -> RouteSettings:
    return route_settings(  # type: ignore[no-any-return]
        base_url=BASE, model="m-1", key_fingerprint="sha256:abcd1234", timeout=30.0, temperature=None, retries_max=0
    )


def call(path: str = "/chat/completions", tokens: int = 10, status: int = 200, model: str = "m-1") -> CallRecord:
    return CallRecord(
        method="POST",
        url=BASE + path,
        base_url=BASE,
        key_fingerprint="sha256:abcd1234",
        model_requested="m-1",
        model_served=model,
        status=status,
        latency_ms=12.5,
        prompt_tokens=tokens,
        completion_tokens=2,
        total_tokens=tokens + 2,
    )


def with_calls(reps: list[RepetitionResult]) -> list[RepetitionResult]:
    """Two calls per repetition; the second call of failing repetitions is served by another model."""
    for rep in reps:
        rep.calls = [call("/completions"), call(model="m-1" if rep.outcome == "passed" else "m-2")]
    return reps


def summary_of(
    patterns: dict[str, str], answers: dict[str, list[Any]] | None = None, min_pass: float = 1.0
) -> SessionSummary:
    reps = with_calls(records(patterns, answers, min_pass=min_pass))
    return build_summary(reps, run=RunFacts(route=route()))


class Page(HTMLParser):
    """Collects the grid's rows and cells, every tag's attributes, and the script blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[str]] = []
        self.in_grid = False
        self.in_cell = False
        self.scripts: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table" and a.get("id") == "grid":
            self.in_grid = True
        elif self.in_grid and tag == "tr" and "data-i" in a:
            self.rows.append([])
        elif self.in_grid and tag == "td" and "c" in (a.get("class") or "").split():
            self.rows[-1].append("")
            self.in_cell = True
        elif tag == "script":
            self.in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.in_grid = False
        elif tag == "td":
            self.in_cell = False
        elif tag == "script":
            self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_cell:
            self.rows[-1][-1] += data
        if self.in_script:
            self.scripts[-1] += data


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


def test_the_format_is_registered_as_a_builtin() -> None:
    assert builtin("html") is FORMAT
    assert isinstance(FORMAT, HtmlFormat) and FORMAT.name == "html" and FORMAT.suffix == ".html"


def test_hostile_answers_and_ids_are_escaped_everywhere() -> None:
    answers = {"a": [HOSTILE, "ok", {"html": HOSTILE}, "ok", HOSTILE]}
    summary = summary_of({"a": "PFPFP", "b": "PPPPP"}, answers)
    summary.warnings.append(HOSTILE)
    summary.tasks[1].task_id = HOSTILE
    summary.tasks[0].repetitions[1].notes.append(HOSTILE)
    text = render(summary)
    assert "<img" not in text
    assert 'onerror="alert' not in text
    assert "<!--" not in text
    # Only the page's own two script blocks open and close.
    assert text.count("<script") == 2 and text.count("</script>") == 2
    page = parse(text)
    assert [tag for tag, _ in page.tags].count("img") == 0
    data = json.loads(page.scripts[0])
    assert HOSTILE in data["s"]  # the data keeps the answer intact: the script sets it as text
    assert any(HOSTILE in note for note in (data["s"][i] for i in data["t"][0]["r"][1]["m"]))
    assert "&lt;/script&gt;&lt;img" in text  # and the markup shows it as text


def test_no_external_resource_is_referenced() -> None:
    summary = summary_of({"a": "PFPFP"}, {"a": ["http://evil.example/x.png", "b", "c", "d", "e"]})
    text = render(summary)
    page = parse(text)
    for tag, attrs in page.tags:
        assert "src" not in attrs, tag
        href = attrs.get("href")
        assert href is None or href.startswith("#"), (tag, href)
        assert tag not in ("link", "img", "iframe", "object", "embed", "base", "form")
    assert "url(" not in text and "@import" not in text
    markup = re.sub(r"<script.*?</script>", "", text, flags=re.S)
    # Outside the data the report names (base URL, answers), no URL appears in the markup's attributes.
    assert not re.search(r"""=\s*["']?(https?:|//)""", markup)
    assert "default-src 'none'" in text  # and the page forbids itself to load anything


def test_cells_show_outcome_and_answer_class_by_symbol() -> None:
    patterns = {"a": "PFPFP", "b": "PPPPP", "c": "FFFFF", "d": "PS-PP"}
    answers = {"a": ["x", "y", "x", "z", "x"], "b": ["k"] * 5, "c": ["1", "2", "1", "2", "1"]}
    summary = summary_of(patterns, answers)
    page = parse(render(summary))
    assert len(page.rows) == len(patterns)
    assert all(len(row) == 5 for row in page.rows)  # tasks × n cells
    assert page.rows[0] == ["✓A", "✗B", "✓A", "✗C", "✓A"]
    assert page.rows[1] == ["✓A"] * 5
    assert page.rows[2] == ["✗A", "✗B", "✗A", "✗B", "✗A"]
    assert page.rows[3] == ["✓", "–", "○", "✓", "✓"]  # no answers recorded: outcome only


def test_cell_count_at_mixed_n_and_no_answer_class() -> None:
    reps = records({"a": "PFP", "b": "PPPPP"}, {"a": ["x", None, "x"]})
    reps[1].answer_recorded = False
    summary = build_summary(reps)
    page = parse(render(summary))
    assert [len(row) for row in page.rows] == [3, 5]
    assert page.rows[0] == ["✓A", "✗∅", "✓A"]


def test_inconsistent_tasks_get_a_side_by_side_up_to_the_first_differing_call() -> None:
    summary = summary_of({"flaky": "PFPPP", "steady": "PPPPP"}, {"flaky": ["x", "y", "x", "x", "x"]})
    text = render(summary)
    assert 'id="why-0"' in text and 'id="why-1"' not in text
    section = text[text.index('id="why-0"') :]
    assert "passing: repetition 1" in section and "failing: repetition 2" in section
    # The second call differs (m-2 served): it is the highlighted row, marked on both sides.
    assert section.count('<tr class="diff"><td>2</td>') == 2
    assert "<mark>m-1 → m-2</mark>" in section
    assert "call 2, highlighted" in section


def test_header_shows_verdict_figures_gates_route_and_drift() -> None:
    summary = summary_of({"a": "PFPFP", "b": "PPPPP"}, min_pass=0.0)
    summary.tasks[0].repetitions[0].calls[0].base_url = "http://other:1/v1"
    summary = build_summary([r for t in summary.tasks for r in t.repetitions], run=RunFacts(route=route()))
    from pytest_consistency.analysis.summary import conclude

    conclude(summary, {"consistency_gap_max": 1.0})
    summary.passed = False
    text = render(summary)
    assert "✗ failed" in text and "gate --consistency-gap-max failed" in text
    assert "consistency gap" in text and "Mean@5" in text and "pass^5" in text and "pass@5" in text
    assert "answer disagreement" in text
    assert "sha256:abcd1234" in text and BASE in text
    assert "Route drift events" in text and "base URL: 2 different" in text


def test_rendering_is_deterministic_and_survives_the_json_report() -> None:
    summary = summary_of({"a": "PFPFP", "b": "PPPPP"}, {"a": ["x", {"k": [1, 2]}, "x", "z", None]})
    first = render(summary)
    assert render(copy.deepcopy(summary)) == first
    again = SessionSummary.from_dict(json.loads(json.dumps(summary.to_dict())))
    assert render(again) == first


def test_a_suite_without_http_shows_no_route() -> None:
    summary = build_summary(records({"a": "PP"}), run=RunFacts(route=route()))
    text = render(summary)
    assert "No task made an HTTP call" in text and BASE not in text.split('id="pc-data"')[0]


def test_a_key_drift_pair_is_not_called_matching_calls() -> None:
    reps = records({"a": "PF"}, {"a": ["x", "y"]})
    reps[0].calls = [call()]
    reps[1].calls = [call()]
    reps[1].calls[0].key_fingerprint = "sha256:99999999"
    text = render(build_summary(reps, run=RunFacts(route=route())))
    assert "Their calls match" not in text
    assert "Calls up to the first that differs (call 1" in text and "<mark>sha256:99999999</mark>" in text


def cause_rows(text: str) -> list[list[str]]:
    """The rows of the page's table of causes, as text."""
    section = re.search(r'<section id="causes">.*?</section>', text, re.S)
    assert section is not None
    rows = re.findall(r"<tr>(.*?)</tr>", section.group(), re.S)
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)] for row in rows]


def test_the_gap_by_cause_adds_up_and_each_task_shows_its_cause_sortable() -> None:
    summary = cause_summary()
    text = render(summary)
    assert cause_rows(text) == [
        ["cause", "tasks", "points of the gap", "interval", "which"],
        ["input", "1", "16.0 pp", "[0.4, 16.0]", "clock"],
        ["environment", "1", "8.0 pp", "[1.1, 10.7]", "search"],
        ["sampling", "1", "12.0 pp", "[2.9, 12.0]", "sampled"],
        ["outside the model", "1", "0.0 pp", "[0.0, 10.7]", "answers"],
        ["all causes", "4", "36.0 pp", "", ""],
    ]
    assert f"gap {summary.consistency_gap_pp:.1f}" in text  # the total is the gap the page prints
    assert "Intervals at 95 % confidence, conditional on the causes named." in text
    for line in advice_lines(summary.tasks, summary.causes, summary.consistency_gap_pp):
        assert f"<li>{html.escape(line)}</li>" in text
    page = parse(text)
    grid = next(a for tag, a in page.tags if tag == "table" and a.get("id") == "grid")
    assert grid["data-lead"] == "7"  # the cause column sits before the repetitions
    ranks = {a["data-i"]: a["data-cr"] for tag, a in page.tags if tag == "tr" and "data-cr" in a}
    order = [t.task_id for t in summary.tasks]
    assert {order[int(i)]: int(r) for i, r in ranks.items() if i is not None and r is not None} == {
        "sampled": 3,
        "clock": 1,
        "search": 2,
        "answers": 4,
        "steady": 6,  # no cause: after every cause (judge, the sixth, is rank 5)
    }
    assert '<button type="button" data-sort="cause">cause</button>' in text and "cause: function (tr)" in text
    assert all(len(row) == 5 for row in page.rows)  # five repetition cells per row, whatever the lead columns


def test_each_inconsistent_task_shows_its_finding_and_the_two_differing_texts_side_by_side() -> None:
    summary = cause_summary()
    text = render(summary)
    clock = summary.tasks.index(next(t for t in summary.tasks if t.task_id == "clock"))
    block = re.search(rf'<div class="cause" id="cause-{clock}">.*?</div></div></div>', text, re.S)
    assert block is not None, text
    shown = block.group()
    assert "<dt>cause</dt><dd>input, step 1</dd>" in shown and "<dt>where</dt><dd>the system message</dd>" in shown
    assert "freeze what varies in the system message" in shown
    sides = re.findall(r'<div class="side"><h4>(.*?)</h4><pre>(.*?)</pre>', shown, re.S)
    assert sides == [
        ("repetition 1: the system message", "You are a bookkeeper. Now: 09:1<mark>1</mark>"),
        ("repetition 2: the system message", "You are a bookkeeper. Now: 09:1<mark>2</mark>"),
    ]
    sampled = next(t for t in summary.tasks if t.task_id == "sampled")
    assert sampled.why is not None and f"<dt>not pinned</dt><dd>{html.escape(', '.join(sampled.why.unpinned))}" in text
    assert "<dt>cause</dt><dd>outside the model, after the last step</dd>" in text
    assert '<a href="#why-' in next(line for line in text.split("<tr") if 'data-cr="1"' in line)


def test_differing_texts_are_escaped_and_a_difference_past_the_kept_text_says_so() -> None:
    summary = cause_summary()
    clock = next(t for t in summary.tasks if t.task_id == "clock")
    assert clock.why is not None
    clock.why = dataclasses.replace(
        clock.why,
        sides=(Evidence(1, HOSTILE, beyond=True), Evidence(2, HOSTILE, beyond=True)),
        where=HOSTILE,
        advice=HOSTILE,
    )
    text = render(summary)
    assert "<img" not in text and text.count("<script") == 2
    assert text.count("the difference lies past the text a call record keeps") == 2


def test_a_key_in_a_differing_span_is_redacted_on_the_page() -> None:
    raw = cause_summary(CAUSE_SECRET)
    clock = next(t for t in raw.tasks if t.task_id == "clock")
    assert clock.why is not None and CAUSE_SECRET in clock.why.sides[0].text  # the span holds it
    text = render(redacted(raw, CAUSE_SECRET))
    assert CAUSE_SECRET not in text and "&lt;redacted&gt; Now: 09:1<mark>1</mark>" in text


def test_a_task_that_failed_every_time_is_no_green_tick_whatever_its_bar() -> None:
    """0/5 at min_pass=0 passes its bar; it was a green tick beside the tasks that never failed."""
    text = render(summary_of({"none": "FFFFF", "some": "PFPPP", "all": "PPPPP"}, min_pass=0.0))
    cells = dict(re.findall(r'<th class="tid" scope="row">([^<]*)</th>.*?<td class="v ([a-z]+)">', text, re.S))
    assert cells == {"none": "warn", "some": "warn", "all": "good"}, cells
    assert text.count('<td class="v good">✓') == 1


def test_a_task_id_may_wrap_between_its_parts_never_inside_a_word() -> None:
    """A test id has no space: a narrow column either spilled it or cut it mid-word (issue 42, item 5). The row
    header offers a break after each separator and before a bracket, and nowhere else."""
    assert breakable("examples/test_cause_tasks.py::test_cause_route[a-b]") == (
        "examples/<wbr>test_<wbr>cause_<wbr>tasks.py::<wbr>test_<wbr>cause_<wbr>route<wbr>[a-b]"
    )
    assert "<img" not in breakable(HOSTILE) and html.unescape(breakable(HOSTILE).replace("<wbr>", "")) == HOSTILE
    summary = summary_of({"tests/test_agent.py::test_monthly_total[march]": "PFPPP"})
    text = render(summary)
    header = re.search(r'<th class="tid" scope="row">(.*?)</th>', text, re.S)
    assert header is not None
    assert header.group(1) == (
        'test_<wbr>monthly_<wbr>total<wbr>[march]<span class="tf">tests/<wbr>test_<wbr>agent.py::</span>'
    )
    assert re.sub(r"<[^>]+>", "", header.group(1)) == "test_monthly_total[march]tests/test_agent.py::"
