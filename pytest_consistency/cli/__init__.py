"""``pytest-consistency``: merge, show and compare JSON reports, without pytest, openai or vcrpy; convert cassettes.

- ``merge REPORT... -o OUT``: shard or matrix reports into the report of one run over everything, gated by the
  same options as pytest (command line, or ``--consistency-config`` YAML, else ``consistency.yaml`` in the current
  directory, as a session reads rootdir's); exit 0 when it passes, 1 when a gate or a task fails, 2 when the input
  is unusable;
- ``show REPORT``: the terminal summary the session printed;
- ``compare A.json B.json [C.json ...]``: one row per report (the users' A-to-D experiment), each later report
  tested against the first;
- ``plan [REPORT]``: before a run, per task and gate the chance of a decided verdict at the chosen n, the n that
  would decide it, and the expected repetitions, tokens, dollars and minutes, from the last report
  (:mod:`..analysis.plan`); ``--format json`` for the typed plan;
- ``verify REPORT``: every sequential decision the report states, recomputed from the outcomes it keeps by the
  functions the session decided with (:mod:`..analysis.verify`); exit 0 when all agree, 1 listing each one that
  does not, 4 when the report lacks what they need (not a sequential report, an earlier schema);
- ``cassettes convert --to json|yaml [DIR ...]``: the repetitions' cassettes from one format to the other, in place
  (:mod:`.cassette_convert`; the one command that imports vcrpy).

Options come from the plugin's own table (:mod:`.options`), so a gate added there is a flag here too.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_consistency.analysis.compare_table import FORMATS, comparison_table
from pytest_consistency.analysis.gates import thresholds_of
from pytest_consistency.analysis.merge import MergeError, gated_merge
from pytest_consistency.config.option import Option
from pytest_consistency.config.options import (
    ANALYSIS_OPTIONS,
    BY_DEST,
    BY_NAME,
    CONFIG_FILE,
    GATE_OPTIONS,
    OUTPUT_OPTIONS,
)
from pytest_consistency.config.options_sequential import ADAPTIVE_OPTIONS, SEQUENTIAL_OPTIONS
from pytest_consistency.config.parse import SettingError, argparse_type
from pytest_consistency.config.yaml import ConfigError, load_yaml
from pytest_consistency.model.result import Analysis, SessionSummary
from pytest_consistency.report import BUILTIN, builtin
from pytest_consistency.report.encodable import visible
from pytest_consistency.report.json_report import ReportError, read_report, write_atomic, write_text_atomic
from pytest_consistency.report.terminal import render

PROG = "pytest-consistency"
#: Analysis options that make sense on reports; ``merge`` also takes the baseline (a sharded run is compared once,
#: merged), ``compare`` does not (its first report is the baseline).
REPORT_ANALYSIS = tuple(o for o in ANALYSIS_OPTIONS if o.dest != "consistency_baseline")
BASELINE = next(o for o in ANALYSIS_OPTIONS if o.dest == "consistency_baseline")
#: Options that choose how reports are analysed (as opposed to gates and the baseline).
ANALYSIS_DESTS = frozenset(
    {
        "consistency_confidence",
        "consistency_interval_target",
        "consistency_gate_on",
        "consistency_inconclusive",
        "consistency_test",
        "consistency_suite_regression",
    }
)


class UsageProblem(Exception):
    """Bad input to the command: printed as ``pytest-consistency <command>: error: ...``, exit status 2."""


def _add(parser: argparse.ArgumentParser, options: Sequence[Option[Any]]) -> None:
    for option in options:
        if option.is_flag:  # unset stays None, so the YAML value or the reports' own setting is kept
            parser.add_argument(option.flag, dest=option.dest, action="store_const", const=True, help=option.help)
            if option.negation is not None:
                parser.add_argument(
                    option.negation,
                    dest=option.dest,
                    action="store_const",
                    const=False,
                    help=f"switch {option.flag} off",
                )
            continue
        if option.is_list:  # given once per value: each parsed to a tuple, joined in _settings
            parser.add_argument(
                option.flag,
                dest=option.dest,
                action="append",
                type=argparse_type(option.parse, option.metavar),
                metavar=option.metavar,
                help=option.help,
            )
            continue
        parser.add_argument(
            option.flag,
            dest=option.dest,
            type=argparse_type(option.parse, option.metavar),
            metavar=option.metavar,
            help=option.help,
        )


@functools.cache
def build_parser() -> argparse.ArgumentParser:
    """The command line's parser, built once in a process that calls ``main`` more than once (a test's sweep of
    hostile reports calls it 1,000 times; a build took 5 ms, 41 % of that sweep's time). Parsing leaves it as it
    was, and help is laid out at print time, at the terminal's width then."""
    parser = argparse.ArgumentParser(prog=PROG, description="Merge, show and compare pytest-consistency reports.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    merge = commands.add_parser("merge", help="merge shard reports into one report, and gate it")
    merge.add_argument("reports", nargs="+", type=Path, metavar="REPORT")
    merge.add_argument("-o", "--output", type=Path, required=True, metavar="OUT", help="write the merged report")
    merge.add_argument(
        "--allow-mixed",
        action="store_true",
        help="merge reports of different routes, n or overlapping repetitions anyway (with a warning)",
    )
    merge.add_argument(
        "--consistency-config",
        type=Path,
        metavar="FILE",
        help=f"YAML settings (gates, analysis, outputs; default: {CONFIG_FILE} here, when it exists)",
    )
    _add(merge, (*GATE_OPTIONS, *REPORT_ANALYSIS, BASELINE, *OUTPUT_OPTIONS))
    merge.add_argument("--junitxml", type=Path, metavar="FILE", help="write the merged run as JUnit XML to FILE")

    show = commands.add_parser("show", help="print the terminal summary of a report, or another format of it")
    show.add_argument("report", type=Path, metavar="REPORT")
    show.add_argument(
        "-q", "--quiet", action="count", default=0, help="-q: the tasks that need a look; -qq: the overall lines only"
    )
    show.add_argument(
        "--format",
        choices=tuple(BUILTIN),
        default="terminal",
        help="terminal (default), json, markdown, html, junit, otlp-json (the OpenTelemetry spans, as OTLP JSON)",
    )
    show.add_argument(
        "--consistency-otel-content",
        action="store_true",
        help="with --format otlp-json: put the prompts and completions on the model-call spans",
    )

    compare = commands.add_parser("compare", help="one row per report, each tested against the first")
    compare.add_argument("reports", nargs="+", type=Path, metavar="REPORT")
    compare.add_argument("--labels", help="comma-separated row labels (default: the file names)")
    compare.add_argument("--format", choices=FORMATS, default="text", help="text (default), markdown or json")
    compare.add_argument(
        "--consistency-config",
        type=Path,
        metavar="FILE",
        help=f"YAML settings (analysis; default: {CONFIG_FILE} in the current directory, when it exists)",
    )
    _add(compare, REPORT_ANALYSIS)

    plan = commands.add_parser(
        "plan", help="before a run: the chance of a decided verdict, the n that decides, and what the run will cost"
    )
    plan.add_argument(
        "report",
        nargs="?",
        type=Path,
        metavar="REPORT",
        help="the last run's JSON report (default: report: in the YAML settings, as the session writes it)",
    )
    plan.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    plan.add_argument(
        "--consistency-config",
        type=Path,
        metavar="FILE",
        help=f"YAML settings (gates, analysis, prices; default: {CONFIG_FILE} here, when it exists)",
    )
    _add(plan, PLAN_OPTIONS)
    check = commands.add_parser(
        "verify", help="recompute every sequential decision of a report from its outcomes, and compare"
    )
    check.add_argument("report", type=Path, metavar="REPORT")

    cassettes = commands.add_parser("cassettes", help="work on the cassette files: convert between the formats")
    actions = cassettes.add_subparsers(dest="action", required=True, metavar="ACTION")
    convert = actions.add_parser("convert", help="convert each repetition's cassette to JSON or YAML, in place")
    convert.add_argument("directories", nargs="*", type=Path, metavar="DIR", help="cassette directories (cassettes)")
    convert.add_argument("--to", required=True, choices=("json", "yaml"), help="the format to write")
    convert.add_argument("--dry-run", action="store_true", help="say what would be converted; change nothing")
    return parser


def _read(paths: Sequence[Path]) -> list[tuple[str, SessionSummary]]:
    try:
        return [(str(path), read_report(path)) for path in paths]
    except ReportError as exc:
        raise UsageProblem(str(exc)) from None


#: Where a YAML file no option named is looked for: the command has no rootdir, so where it runs (in CI, the
#: checkout's root, where the session found it too).
HERE = "the current directory"


def _config_file(args: argparse.Namespace) -> str | None:
    """Set ``args.consistency_config`` to ``consistency.yaml`` in the current directory when no option named a file
    and it is there; the line that says which file is read (None when none is)."""
    if args.consistency_config is not None:
        return f"config: {args.consistency_config} (--consistency-config)"
    found = Path(CONFIG_FILE)
    if not found.is_file():
        return None
    args.consistency_config = found
    args.config_found = True
    return f"config: {found} (found in {HERE})"


def by_name(values: dict[str, Any]) -> Callable[[str], Any]:
    """Read ``values`` (by ``dest``, as argparse keeps them) by the settings' names, as ``thresholds_of`` asks."""
    return lambda name: values.get(BY_NAME[name].dest)


def _settings(args: argparse.Namespace, options: Sequence[Option[Any]]) -> dict[str, Any]:
    """Command line > YAML (``--consistency-config``, else ``consistency.yaml`` here) for each option; unset
    options are absent."""
    values: dict[str, Any] = {}
    yaml_values: dict[tuple[str, ...], Any] = {}
    lines: dict[tuple[str, ...], int] = {}
    if args.consistency_config is not None:
        try:
            yaml_values, lines = load_yaml(
                args.consistency_config, HERE if getattr(args, "config_found", False) else None
            )
        except ConfigError as exc:
            raise UsageProblem(str(exc)) from None
    for option in options:
        cli = getattr(args, option.dest, None)
        if cli is not None and option.is_list:
            cli = tuple(item for given in cli for item in given)
        if cli is not None:
            values[option.dest] = cli
        elif option.yaml_path in yaml_values:
            try:
                values[option.dest] = option.parse(yaml_values[option.yaml_path])
                if option.is_flag:
                    values[option.dest] = values[option.dest] == "true"
            except SettingError as exc:
                where = f"{args.consistency_config}:{lines.get(option.yaml_path, 1)}"
                raise UsageProblem(f"{where}: {option.yaml_key}: {exc} (see {option.flag})") from None
    return values


def _analysis(values: dict[str, Any], recorded: Analysis) -> Analysis:
    """The reports' own analysis, with whatever the command line or YAML sets instead."""
    fields = {
        "consistency_confidence": "confidence",
        "consistency_interval_target": "target",
        "consistency_gate_on": "gate_on",
        "consistency_inconclusive": "inconclusive",
        "consistency_test": "test",
        "consistency_suite_regression": "suite_regression",
    }
    changes = {name: values[dest] for dest, name in fields.items() if dest in values}
    return Analysis(**{**recorded.__dict__, **changes})


#: An output of the merge: (format, the option that asked for it, the file).
Output = tuple[str, str, Path]


def _outputs(args: argparse.Namespace, values: dict[str, Any]) -> list[Output]:
    """The outputs the merge writes besides ``-o``, as the pytest session would: ``--consistency-md``,
    ``--consistency-html``, ``--consistency-output NAME=FILE``, ``--junitxml`` and ``$GITHUB_STEP_SUMMARY`` (appended
    unless ``--no-consistency-md``); a path from the YAML file is relative to it. Checked before anything is merged."""

    def path(dest: str, raw: str) -> Path:
        given = Path(raw).expanduser()
        if getattr(args, dest, None) is None and args.consistency_config is not None and not given.is_absolute():
            return Path(args.consistency_config).parent / given
        return given

    wanted: list[Output] = []
    for dest, name in (("consistency_md", "markdown"), ("consistency_html", "html")):
        if dest in values:
            wanted.append((name, BY_FLAG_DEST[dest], path(dest, values[dest])))
    if "consistency_output" in values:
        name, _, file = values["consistency_output"].partition("=")
        if builtin(name) is None:
            raise UsageProblem(
                f"--consistency-output: no report format {name!r} here (built in: {', '.join(BUILTIN)}; a format "
                "from a pytest_consistency_report_format hook needs the pytest session)"
            )
        wanted.append((name, "--consistency-output", path("consistency_output", file)))
    if args.junitxml is not None:
        wanted.append(("junit", "--junitxml", args.junitxml))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and not values.get("consistency_no_md"):
        wanted.append(("markdown", "$GITHUB_STEP_SUMMARY", Path(step_summary)))
    return wanted


BY_FLAG_DEST = {option.dest: option.flag for option in OUTPUT_OPTIONS}


def _write_outputs(summary: SessionSummary, wanted: Sequence[Output]) -> list[str]:
    """Write each output (the step summary appended: other steps of the job write there too); the lines to print."""
    lines = []
    for name, option, path in wanted:
        fmt = builtin(name)
        assert fmt is not None  # checked by _outputs
        try:
            text = visible(fmt.render(summary))
            if option == "$GITHUB_STEP_SUMMARY":
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(text)
            else:
                write_text_atomic(path, text)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise UsageProblem(
                f"{option}: cannot write the {name} output to {path} ({reason}); choose a writable path"
            ) from None
        lines.append(f"{name}: {path}")
    return lines


def run_merge(args: argparse.Namespace, out: Any) -> int:
    config_line = _config_file(args)
    reports = _read(args.reports)
    values = _settings(args, (*GATE_OPTIONS, *REPORT_ANALYSIS, BASELINE, *OUTPUT_OPTIONS))
    wanted = _outputs(args, values)
    # Shards analysed differently are refused, unless the command says how to analyse the merge.
    analysis = _analysis(values, reports[0][1].analysis) if ANALYSIS_DESTS & set(values) else None
    baseline = None
    if "consistency_baseline" in values:
        label = str(values["consistency_baseline"])
        path = Path(label)
        if args.consistency_config is not None and getattr(args, "consistency_baseline", None) is None:
            path = args.consistency_config.parent / path  # a YAML path is relative to the YAML file
        baseline = (label, _read([path])[0][1])
    explicit = {dest: value for dest, value in thresholds_of(by_name(values)).items() if value is not None}
    try:
        summary = gated_merge(reports, explicit, analysis, args.allow_mixed, baseline)
    except MergeError as exc:
        raise UsageProblem(str(exc)) from None
    try:
        write_atomic(args.output, summary.to_dict())
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageProblem(f"cannot write {args.output} ({reason}); choose a writable path with -o") from None
    written = _write_outputs(summary, wanted)
    _print(render(summary, 0, _width()), out)
    for line in [f"report: {args.output}", *written, *([config_line] if config_line else [])]:
        print(visible(line), file=out)
    return summary.exit_status if summary.exit_status is not None else 1


def run_show(args: argparse.Namespace, out: Any) -> int:
    if args.consistency_otel_content and args.format != "otlp-json":
        raise UsageProblem("--consistency-otel-content goes with --format otlp-json")
    summary = _read([args.report])[0][1]
    if args.format == "terminal":
        _print(render(summary, -min(args.quiet, 2), _width()), out)
        return 0
    if args.format == "otlp-json":
        from pytest_consistency.report.otlp import OtelUnavailable, OtlpJsonFormat
        from pytest_consistency.report.otlp.environment import OtelSetupError
        from pytest_consistency.report.otlp.export import check_environment

        try:
            check_environment(os.environ, export=False)  # what the spans read: the resource's variables
            text = OtlpJsonFormat(content=args.consistency_otel_content).render(summary)
        except (OtelUnavailable, OtelSetupError) as exc:
            raise UsageProblem(f"--format otlp-json: {exc}") from None
        out.write(visible(text))
        return 0
    fmt = builtin(args.format)
    assert fmt is not None
    out.write(visible(fmt.render(summary)))
    return 0


def run_compare(args: argparse.Namespace, out: Any) -> int:
    config_line = _config_file(args)
    if config_line is not None:  # on stderr: stdout is the table, maybe JSON
        print(visible(f"{PROG} compare: {config_line}"), file=sys.stderr)
    reports = _read(args.reports)
    labels = (
        [label.strip() for label in args.labels.split(",")] if args.labels else [Path(p).stem for p in args.reports]
    )
    if len(labels) != len(reports):
        raise UsageProblem(f"--labels names {len(labels)} row(s) for {len(reports)} report(s); give one per report")
    values = _settings(args, REPORT_ANALYSIS)
    analysis = _analysis(values, reports[0][1].analysis)
    table = comparison_table(list(zip(labels, (r for _, r in reports), strict=True)), analysis, args.format)
    print(visible(table), file=out)
    return 0


#: What ``plan`` reads besides the gates: the analysis, the modes, the prices, the concurrency and the report's path.
PLAN_SETTINGS = ("consistency_n_min", "consistency_prices", "consistency_concurrency")
PLAN_OPTIONS = (
    *GATE_OPTIONS,
    *REPORT_ANALYSIS,
    *(o for o in ADAPTIVE_OPTIONS if o.dest == "consistency_n_min"),
    *SEQUENTIAL_OPTIONS,
    *(BY_DEST[dest] for dest in PLAN_SETTINGS if dest != "consistency_n_min"),
)


def run_plan(args: argparse.Namespace, out: Any) -> int:
    from pytest_consistency.analysis.plan import PlanError, build_plan, planned_from
    from pytest_consistency.model.prices import price_table
    from pytest_consistency.report.plan import plan_json, plan_text

    _config_file(args)
    values = _settings(args, (*PLAN_OPTIONS, BY_DEST["consistency_report"]))
    path = args.report
    if path is None:
        if "consistency_report" not in values:
            raise UsageProblem(
                "no report to plan from: pass the last run's JSON report (pytest-consistency plan REPORT), or set "
                "report: in consistency.yaml (the session writes it with --consistency-report FILE)"
            )
        path = Path(values["consistency_report"])
        if args.consistency_config is not None and not path.is_absolute():
            path = Path(args.consistency_config).parent / path  # a YAML path is relative to the YAML file
    summary = _read([path])[0][1]
    analysis = _analysis(values, summary.analysis)
    if values.get("consistency_sequential"):
        alpha = values.get("consistency_sequential_alpha") or analysis.alpha
        analysis = Analysis(**{**analysis.__dict__, "sequential_alpha": alpha})
    elif values.get("consistency_sequential") is False:
        analysis = Analysis(**{**analysis.__dict__, "sequential_alpha": None})
    thresholds = thresholds_of(by_name(values))
    try:
        plan = build_plan(
            str(path),
            planned_from(summary),
            summary,
            thresholds,
            analysis,
            price_table(values.get("consistency_prices", ())),
            values.get("consistency_concurrency") or 1,
            values.get("consistency_n_min") or 1,
        )
    except PlanError as exc:
        raise UsageProblem(str(exc)) from None
    out.write(visible(plan_json(plan) if args.format == "json" else plan_text(plan)))
    return 0


#: ``verify``'s exit status for a report that lacks what its decisions need (0: all agree, 1: some do not).
UNVERIFIABLE = 4


def run_verify(args: argparse.Namespace, out: Any) -> int:
    from pytest_consistency.analysis.verify import Unverifiable, verify

    try:
        summary = read_report(args.report)
    except ReportError as exc:  # names the file itself
        print(visible(f"{PROG} verify: error: {exc}"), file=sys.stderr)
        return UNVERIFIABLE
    try:
        found = verify(summary)
    except Unverifiable as exc:
        print(visible(f"{PROG} verify: error: {args.report}: {exc}"), file=sys.stderr)
        return UNVERIFIABLE
    if not found.disagreements:
        print(f"verified: {found.decisions} decisions", file=out)
        return 0
    print(f"{len(found.disagreements)} of {found.decisions} decisions disagree with the report's records:", file=out)
    for disagreement in found.disagreements:
        print(visible(f"  {disagreement.text}"), file=out)
    return 1


def run_cassettes(args: argparse.Namespace, out: Any) -> int:
    from pytest_consistency.cassette.convert import ConvertError, convert, summary_lines

    try:
        outcome = convert(args.directories or [Path("cassettes")], args.to, args.dry_run)
    except ConvertError as exc:
        raise UsageProblem(str(exc)) from None
    for line in summary_lines(outcome, args.to, args.dry_run):
        print(visible(line), file=out)
    return 1 if outcome.left else 0


def _width() -> int:
    return min(shutil.get_terminal_size((80, 24)).columns, 120)


def _print(lines: Sequence[Any], out: Any) -> None:
    for line in lines:
        print(visible(line.text), file=out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    commands = {
        "merge": run_merge,
        "show": run_show,
        "compare": run_compare,
        "plan": run_plan,
        "verify": run_verify,
        "cassettes": run_cassettes,
    }
    try:
        return commands[args.command](args, sys.stdout)
    except UsageProblem as exc:
        print(visible(f"{PROG} {args.command}: error: {exc}"), file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
