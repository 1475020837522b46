"""JUnit XML: pytest's ``--junitxml`` file annotated with the consistency result, and a standalone rendering.

CI systems (Jenkins, GitLab, Azure) read JUnit XML, and read each ``<testcase>`` as pass or fail. Left alone,
pytest's file would show every failed repetition as a failure even when ``min_pass`` tolerates it and the run
passed, so a dashboard would contradict the exit status. :func:`annotate` rewrites the file pytest wrote:

- a **tolerated** failure (a failed or erroring repetition of a task whose verdict is ``pass``, in a run that was
  not interrupted) becomes a passing testcase that keeps its evidence as Maven Surefire's ``<flakyFailure>`` /
  ``<flakyError>`` (with the traceback in ``<stackTrace>``), which the Jenkins xunit schema (junit-10.xsd)
  allows, plus the property ``consistency.tolerated=true``; the suite's ``failures``/``errors`` counts drop
  accordingly. A task whose verdict is ``fail`` keeps its ``<failure>`` elements;
- every repetition's testcase gets ``consistency.*`` properties: its task, repetition, outcome, answer class, the
  task's drift kinds and figures, the cause of an inconsistent task (``consistency.task.cause``, ``.step``,
  ``.line``) and, with a baseline, the task's status and p/q-values;
- the ``<testsuite>`` gets the overall figures with intervals, the gap by cause (``consistency.cause.<cause>.gap_pp``
  and ``.tasks`` per cause present, spaces in the name as ``_``), every gate, ``passed`` and ``exit_status``, and
  the baseline summary.

Per-testcase ``<properties>`` are what pytest itself writes for ``record_property``; the xunit-plugin's
junit-10.xsd (which pytest's default ``junit_family=xunit2`` targets) does not list them, so a validator that
enforces that schema strictly rejects them, as it rejects ``record_property``. Everything else validates.

Every text added (property values, moved tracebacks) passes through
:func:`~pytest_consistency.secrets.literals.redact_text`. The writes are atomic, so a CI step never reads half a file.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path

from pytest_consistency.analysis.verdict import failure_reasons, met_threshold_text
from pytest_consistency.model.records import RepetitionResult
from pytest_consistency.model.result import SessionSummary, TaskChange, TaskResult
from pytest_consistency.report.cost import suite_properties as cost_properties
from pytest_consistency.report.json_report import write_text_atomic
from pytest_consistency.report.judge import junit_suite_properties as judge_suite_props
from pytest_consistency.report.judge import junit_task_properties as judge_task_props
from pytest_consistency.report.markdown import answer_classes
from pytest_consistency.report.terminal import gate_line
from pytest_consistency.report.user import junit_suite_properties as user_suite_props
from pytest_consistency.report.user import junit_task_properties as user_task_props
from pytest_consistency.secrets.literals import redact_text
from pytest_consistency.stats.interval import Interval

Property = tuple[str, str]

#: Outcome -> the child element that marks a testcase as not passed (``None``: a passing testcase).
_FAILED_TAG = {"failed": "failure", "error": "error"}
_FLAKY_TAG = {"failure": "flakyFailure", "error": "flakyError"}
_ILLEGAL_XML = re.compile("[^\u0009\u000a\u000d\u0020-\u007e\u0080-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_safe(text: str) -> str:
    """``text`` with characters XML 1.0 cannot hold shown as ``#xNN``, as pytest's ``bin_xml_escape`` does."""

    def repl(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"#x{code:02X}" if code <= 0xFF else f"#x{code:04X}"

    return _ILLEGAL_XML.sub(repl, text)


def _mangle(nodeid: str) -> tuple[str, str]:
    """(classname, name) pytest's junitxml writes for ``nodeid`` (without ``junit_prefix``)."""
    try:
        from _pytest.junitxml import mangle_test_address
    except ImportError:  # pragma: no cover - pytest moved it; the documented behaviour below is the same
        path, bracket, params = nodeid.partition("[")
        names = path.split("::")
        names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
        names[-1] += bracket + params
    else:
        names = mangle_test_address(nodeid)
    return ".".join(names[:-1]), _xml_safe(names[-1])


def tolerated(task: TaskResult, rep: RepetitionResult, summary: SessionSummary) -> bool:
    """A failed or erroring repetition the verdict tolerates; an interrupted run tolerates nothing (as its exit
    status does not), since it did not run every repetition the verdict counts on."""
    return summary.counts_as_passed(task) and rep.outcome in _FAILED_TAG and not summary.interrupted


def number(value: float | None) -> str:
    """A figure as a property value: shortest exact repr, ``n/a`` when not measurable."""
    return "n/a" if value is None else repr(float(value))


def interval_properties(name: str, interval: Interval | None, scale: float = 1.0) -> list[Property]:
    if interval is None:
        return []
    return [(f"{name}.low", number(interval.low * scale)), (f"{name}.high", number(interval.high * scale))]


def rate_properties(task: TaskResult) -> list[Property]:
    """A ``min_rate`` task's bar and the one-sided bounds its verdict was read on."""
    return [
        ("consistency.task.min_rate", number(task.min_rate)),
        *interval_properties("consistency.task.rate_bounds", task.rate_bounds),
    ]


def task_properties(task: TaskResult, change: TaskChange | None) -> list[Property]:
    props: list[Property] = [
        ("consistency.task.passes", f"{task.passes}/{task.scored}"),
        ("consistency.task.verdict", task.verdict),
        ("consistency.task.min_pass", number(task.min_pass)),
        *(rate_properties(task) if task.min_rate is not None else []),
        *([("consistency.task.plan_n", str(task.plan_n))] if task.plan_n is not None else []),
        ("consistency.task.pass_hat_k", number(task.pass_hat_k)),
        *interval_properties("consistency.task.pass_hat_k", task.pass_hat_k_interval),
        ("consistency.task.pass_rate", number(task.passes / task.scored if task.scored else None)),
        *interval_properties("consistency.task.pass_rate", task.pass_rate_interval),
        ("consistency.task.gap_pp", number(task.gap_pp)),
    ]
    if task.distinct_answers is not None:
        props.append(("consistency.task.distinct_answers", str(task.distinct_answers)))
    if task.attribution:
        props.append(("consistency.task.attribution", task.attribution))
    if task.drift is not None and task.drifted:
        props.append(("consistency.task.drift", ",".join(task.drift.kinds)))
    if task.cause is not None:
        props.append(("consistency.task.cause", task.cause))
        if task.why is not None:
            props += [
                ("consistency.task.cause.step", "n/a" if task.why.step is None else str(task.why.step)),
                ("consistency.task.cause.line", task.why.line),
            ]
    if change is not None:
        props += [
            ("consistency.task.baseline_status", change.status),
            ("consistency.task.baseline", change.baseline or "n/a"),
            ("consistency.task.p_value", number(change.p_value)),
            ("consistency.task.q_value", number(change.q_value)),
            ("consistency.task.regression", str(change.regression).lower()),
        ]
        if change.confounded:
            props.append(("consistency.task.confounded", "true"))
    return props


def repetition_properties(
    task: TaskResult, rep: RepetitionResult, answer_class: int | None, task_props: list[Property], tolerate: bool
) -> list[Property]:
    props: list[Property] = [
        ("consistency.task_id", task.task_id),
        ("consistency.repetition", str(rep.repeat)),
        ("consistency.n", str(task.n)),
        ("consistency.outcome", rep.outcome),
    ]
    if answer_class is not None:
        props.append(("consistency.answer_class", str(answer_class)))
    if tolerate:
        props.append(("consistency.tolerated", "true"))
    if rep.infrastructure:
        props.append(("consistency.infrastructure", rep.infrastructure))
    if rep.message:
        props.append(("consistency.message", rep.message))
    return props + task_props


def suite_properties(summary: SessionSummary) -> list[Property]:
    iv = summary.intervals
    props: list[Property] = [
        ("consistency.passed", str(summary.passed).lower()),
        ("consistency.exit_status", "n/a" if summary.exit_status is None else str(summary.exit_status)),
        ("consistency.tasks", str(summary.task_count)),
        ("consistency.repeat", "mixed" if summary.repeat is None else str(summary.repeat)),
        ("consistency.k", "mixed" if summary.k is None else str(summary.k)),
        ("consistency.confidence", number(summary.analysis.confidence)),
        ("consistency.gate_on", summary.analysis.gate_on),
        ("consistency.inconclusive", summary.analysis.inconclusive),
        ("consistency.undecided_tasks", str(sum(t.verdict == "undecided" for t in summary.tasks))),
        ("consistency.interval_target", summary.analysis.target),
        *judge_suite_props(summary.judge),
        *user_suite_props(summary.simulated_user),
        ("consistency.mean_at_k", number(summary.mean_at_k)),
        *interval_properties("consistency.mean_at_k", iv.mean_at_k if iv else None),
        ("consistency.pass_hat_k", number(summary.pass_hat_k)),
        *interval_properties("consistency.pass_hat_k", iv.pass_hat_k if iv else None),
        ("consistency.pass_at_k", number(summary.pass_at_k)),
        *interval_properties("consistency.pass_at_k", iv.pass_at_k if iv else None),
        ("consistency.gap_pp", number(summary.consistency_gap_pp)),
        *interval_properties("consistency.gap_pp", iv.gap_pp if iv else None),
        ("consistency.answer_disagreement_pp", number(summary.answer_disagreement_pp)),
        ("consistency.tolerated_failures", str(sum(t.tolerated_failures for t in summary.tasks))),
    ]
    if summary.route is not None:
        props += [
            ("consistency.route_drift_pp", number(summary.route.drift_pp)),
            ("consistency.route_drift_tasks", str(len(summary.route.drift_tasks))),
            ("consistency.total_tokens", str(summary.route.total_tokens)),
        ]
    props += cause_properties(summary)
    props += cost_properties(summary.cost)
    for gate in summary.gates:
        name = f"consistency.gate.{gate.name}"
        props += [
            (f"{name}.option", gate.option),
            (f"{name}.value", number(gate.value)),
            *interval_properties(f"{name}.value", gate.interval),
            (f"{name}.threshold", number(gate.threshold)),
            (f"{name}.state", gate.state),
            (f"{name}.passed", str(gate.passed).lower()),
            *([(f"{name}.level", number(gate.level))] if gate.level is not None else []),
            *([(f"{name}.plan_n", str(gate.plan_n))] if gate.plan_n is not None else []),
        ]
    c = summary.comparison
    if c is not None:
        props += [
            ("consistency.baseline", c.baseline),
            ("consistency.baseline.test", c.test),
            ("consistency.baseline.common_tasks", str(c.common_tasks)),
            ("consistency.baseline.regressions", str(c.regressions)),
            ("consistency.baseline.gap_change_pp", number(c.gap_change_pp)),
            *interval_properties("consistency.baseline.gap_change_pp", c.gap_change_interval),
            ("consistency.baseline.flips_worse", str(c.flips_worse)),
            ("consistency.baseline.flips_better", str(c.flips_better)),
            ("consistency.baseline.flips_p_value", number(c.flips_p_value)),
        ]
        if c.untested is not None:
            props.append(("consistency.baseline.untested", c.untested))
        props += [(f"consistency.baseline.note.{i}", text) for i, text in enumerate(c.notes, start=1)]
        if c.suite_change is not None:
            props += [
                ("consistency.baseline.suite_p_value", number(c.suite_change.p_value)),
                ("consistency.baseline.suite_change_pp", number(c.suite_change.change_pp)),
                *interval_properties("consistency.baseline.suite_change_pp", c.suite_change.change_interval),
                ("consistency.baseline.suite_regression", str(c.suite_regression).lower()),
            ]
    props += [(f"consistency.warning.{i}", text) for i, text in enumerate(summary.warnings, start=1)]
    props += [(f"consistency.error.{i}", text) for i, text in enumerate(summary.errors, start=1)]
    return props


def cause_name(cause: str) -> str:
    """A cause as a part of a property name: ``outside the model`` -> ``outside_the_model``."""
    return cause.replace(" ", "_")


def cause_properties(summary: SessionSummary) -> list[Property]:
    """Per cause present, its points of the gap, their interval (conditional on the causes named) and its tasks:
    ``consistency.cause.input.gap_pp``, ``.gap_pp.low``, ``.gap_pp.high``, ``.tasks`` (the interval named as every
    other interval of the file is)."""
    props: list[Property] = []
    for cause, share in (summary.causes or {}).items():
        if share.tasks:
            name = f"consistency.cause.{cause_name(cause)}"
            props.append((f"{name}.gap_pp", number(share.gap_pp)))
            props += interval_properties(f"{name}.gap_pp", share.interval)
            props.append((f"{name}.tasks", str(share.tasks)))
    return props


def add_properties(element: ET.Element, props: Sequence[Property], secrets: Sequence[str]) -> None:
    """Append ``props`` to the element's ``<properties>`` (created as its first child when missing)."""
    node = element.find("properties")
    if node is None:
        node = ET.Element("properties")
        element.insert(0, node)
    for name, value in props:
        ET.SubElement(node, "property", name=name, value=_xml_safe(redact_text(value, secrets)))


def _classes(task: TaskResult) -> dict[int, int]:
    """Repeat -> the 1-based index of its answer class (scored repetitions of a task that recorded answers)."""
    return {r.repeat: i for i, group in enumerate(answer_classes(task), start=1) for r in group.repetitions}


def _repetitions(summary: SessionSummary) -> Iterator[tuple[TaskResult, RepetitionResult, list[Property], bool]]:
    """Every repetition with its properties and whether its failure is tolerated."""
    changes = {c.task_id: c for c in summary.comparison.tasks} if summary.comparison else {}
    for task in summary.tasks:
        task_props = task_properties(task, changes.get(task.task_id)) + judge_task_props(summary.judge, task.task_id)
        task_props += user_task_props(summary.simulated_user, task.task_id)
        if summary.cost is not None:  # dollars: the task's and each repetition's (``repr``: the exact float)
            task_props += [
                ("consistency.task.cost_usd", repr(task.cost_usd)),
                ("consistency.task.unpriced_calls", str(task.unpriced_calls)),
            ]
        classes = _classes(task)
        for rep in task.repetitions:
            tolerate = tolerated(task, rep, summary)
            props = repetition_properties(task, rep, classes.get(rep.repeat), task_props, tolerate)
            if summary.cost is not None:
                props.insert(4, ("consistency.cost_usd", repr(rep.cost_usd)))
            yield task, rep, props, tolerate


def tolerated_prefix(task: TaskResult) -> str:
    """What a tolerated repetition's message starts with: the task met its threshold, and how often it failed."""
    return f"tolerated ({met_threshold_text(task)}): "


def tolerate_testcase(testcase: ET.Element, secrets: Sequence[str], prefix: str = "") -> tuple[int, int]:
    """Turn ``<failure>``/``<error>`` into ``<flakyFailure>``/``<flakyError>``; returns (failures, errors) removed."""
    removed = {"failure": 0, "error": 0}
    for index, child in enumerate(list(testcase)):
        if child.tag not in _FLAKY_TAG:
            continue
        removed[child.tag] += 1
        flaky = ET.Element(_FLAKY_TAG[child.tag], type=child.get("type") or child.tag)
        message = child.get("message")
        flaky.set("message", _xml_safe(redact_text(prefix + (message or ""), secrets)))
        trace = ET.SubElement(flaky, "stackTrace")
        trace.text = _xml_safe(redact_text(child.text or "", secrets))
        flaky.tail = child.tail
        testcase.remove(child)
        testcase.insert(index, flaky)
    return removed["failure"], removed["error"]


def _count(element: ET.Element, name: str, minus: int) -> None:
    value = element.get(name)
    if value is not None and value.isdigit():
        element.set(name, str(max(0, int(value) - minus)))


def gates_testcase(summary: SessionSummary, secrets: Sequence[str]) -> ET.Element | None:
    """One testcase for the session's gates, failed when a gate counted as failed: a build that only a gate turned
    red must not look green on a test dashboard. None when no gate was set."""
    if not summary.gates:
        return None
    testcase = ET.Element("testcase", classname="pytest-consistency", name="gates", time="0")
    failed = [gate_line(g, summary).text for g in summary.gates if not g.passed]
    if failed:
        failure = ET.SubElement(testcase, "failure", message=_xml_safe(redact_text(failed[0], secrets)))
        failure.text = _xml_safe(redact_text("\n".join(failed), secrets))
    return testcase


def run_testcase(summary: SessionSummary, secrets: Sequence[str]) -> ET.Element | None:
    """One failed testcase for every reason the run failed besides its gates (a task in error, an equivalence
    hook that raised, an exceeded budget, an interrupted session): a dashboard that counts failing testcases
    must not read green when the exit status is 1. None when the run failed for no such reason."""
    # Every reason but the gates (they have a testcase of their own), also those a failing repetition testcase
    # seems to show: a repetition that passed on rerun passes in pytest's file, and a report holds no testcase for
    # a test that is not a repetition.
    reasons = [r for r in failure_reasons(summary) if r.gate is None]
    if summary.passed or not reasons:
        return None
    texts = [r.text + (": " + ", ".join(r.tasks) if r.tasks else "") for r in reasons]
    testcase = ET.Element("testcase", classname="pytest-consistency", name="run", time="0")
    failure = ET.SubElement(testcase, "failure", message=_xml_safe(redact_text(texts[0], secrets)))
    failure.text = _xml_safe(redact_text("\n".join(texts), secrets))
    return testcase


def _add_gates(suite: ET.Element, summary: SessionSummary, secrets: Sequence[str]) -> tuple[int, int]:
    """Append the gates and run testcases to ``suite`` and its counts; returns (tests, failures) added."""
    added = failed = 0
    for testcase in (gates_testcase(summary, secrets), run_testcase(summary, secrets)):
        if testcase is None:
            continue
        suite.append(testcase)
        added += 1
        failed += int(testcase.find("failure") is not None)
    suite.set("tests", str(int(suite.get("tests", "0")) + added))
    suite.set("failures", str(int(suite.get("failures", "0")) + failed))
    return added, failed


def annotate(path: Path, summary: SessionSummary, secrets: Sequence[str]) -> None:
    """Rewrite pytest's ``--junitxml`` file at ``path`` with the consistency result (see the module docstring).

    Raises OSError when the file cannot be read or written and ``xml.etree.ElementTree.ParseError`` when it is
    not XML; the caller reports either as an error of the ``--junitxml`` output.
    """
    tree = ET.parse(path)
    root = tree.getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    by_name: dict[str, list[tuple[str, TaskResult, RepetitionResult, list[Property], bool]]] = {}
    for task, rep, props, tolerate in _repetitions(summary):
        classname, name = _mangle(rep.nodeid)
        by_name.setdefault(name, []).append((classname, task, rep, props, tolerate))
    for suite in suites:
        failures = errors = 0
        for testcase in suite.iter("testcase"):
            classname = testcase.get("classname", "")
            for expected, task, _rep, props, tolerate in by_name.get(testcase.get("name", ""), ()):
                # ``junit_prefix`` puts a prefix before the dotted path: match the end of the classname.
                if classname == expected or classname.endswith("." + expected):
                    add_properties(testcase, props, secrets)
                    if tolerate:
                        removed_failures, removed_errors = tolerate_testcase(testcase, secrets, tolerated_prefix(task))
                        failures += removed_failures
                        errors += removed_errors
                    break
        _count(suite, "failures", failures)
        _count(suite, "errors", errors)
        if root is not suite:
            _count(root, "failures", failures)
            _count(root, "errors", errors)
        add_properties(suite, suite_properties(summary), secrets)
    if suites:
        added, failed = _add_gates(suites[0], summary, secrets)
        if root is not suites[0]:
            root.set("tests", str(int(root.get("tests", "0")) + added))
            root.set("failures", str(int(root.get("failures", "0")) + failed))
    write_text_atomic(path, '<?xml version="1.0" encoding="utf-8"?>' + ET.tostring(root, encoding="unicode"))


def render(summary: SessionSummary, secrets: Sequence[str] = ()) -> str:
    """A standalone JUnit XML document of a report: one testcase per repetition, as :func:`annotate` leaves
    pytest's file (tolerated failures pass, with ``<flakyFailure>``). A report keeps no tracebacks, so failures
    carry the outcome only."""
    suite = ET.Element("testsuite", name="pytest-consistency")
    add_properties(suite, suite_properties(summary), secrets)
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total = 0.0
    for task, rep, props, tolerate in _repetitions(summary):
        classname, name = (_xml_safe(part) for part in _mangle(rep.nodeid))
        testcase = ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{rep.duration:.3f}")
        add_properties(testcase, props, secrets)
        counts["tests"] += 1
        total += rep.duration
        message = _xml_safe(
            f"repetition {rep.repeat} of {task.task_id}: {rep.outcome}" + (f": {rep.message}" if rep.message else "")
        )
        tag = _FAILED_TAG.get(rep.outcome)
        if tag is not None and tolerate:
            text = redact_text(tolerated_prefix(task) + message, secrets)
            ET.SubElement(testcase, _FLAKY_TAG[tag], type=rep.outcome, message=text)
        elif tag is not None:
            ET.SubElement(testcase, tag, message=redact_text(message, secrets))
            counts["failures" if tag == "failure" else "errors"] += 1
        elif rep.outcome in ("skipped", "xfailed", "not run", "curtailed"):
            kind = "pytest.xfail" if rep.outcome == "xfailed" else "pytest.skip"
            ET.SubElement(testcase, "skipped", type=kind, message=redact_text(message, secrets))
            counts["skipped"] += 1
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{total:.3f}")
    _add_gates(suite, summary, secrets)
    root = ET.Element("testsuites", name="pytest-consistency")
    root.append(suite)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


class JUnitFormat:
    """A report as JUnit XML, for ``pytest-consistency show REPORT --format junit``."""

    name = "junit"
    suffix = ".xml"

    def render(self, summary: SessionSummary) -> str:
        return render(summary)


FORMAT = JUnitFormat()
