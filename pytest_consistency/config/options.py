"""Every option of the plugin, declared once, with its command-line flag, ini key, YAML key and type.

An option is a class attribute of its group's class (``CoreOptions``, ``GateOptions``, ...; a group may live in a
module of its own, :mod:`.options_cost`): ``record: Option[Literal[...]] = Option("--consistency-record", ...)``. Its
name is the attribute code reads on the settings (``settings.record``), its annotation the value's type (mypy reads
it through :class:`~.option.Option`'s ``__get__``), and ``Settings`` (:mod:`.settings`) is the class that inherits
every group: there is nothing else to declare, nor to keep in step.

One table drives ``pytest_addoption`` (``plugin.dormant.add_options``), the ini and YAML parsing and the precedence
CLI > YAML > ini > default (:mod:`.settings`), and the options of the ``pytest-consistency`` command (:mod:`.cli`), so
an option cannot exist in one place and be forgotten in another. Values are validated by the same function wherever
they come from (:mod:`.parse`), and an invalid one is an error naming where it came from. Nothing here imports pytest.

Every pytest start with the plugin installed imports this module and registers the table, a session that never uses
the plugin too (``plugin.dormant``): so it builds no dataclass (``dataclasses`` compiles the methods of each class it
makes, about 1 ms a class), nor do the modules it imports (the gates, the parsers, the marker).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_consistency.analysis.gates import CAUSE_FLAG, CAUSE_OPTION
from pytest_consistency.config.marker import MAX_REPETITIONS
from pytest_consistency.config.option import Option, gate_option, options_of
from pytest_consistency.config.options_cost import COST_OPTIONS, CostOptions
from pytest_consistency.config.options_sequential import (
    ADAPTIVE_OPTIONS,
    SEQUENTIAL_OPTIONS,
    AdaptiveOptions,
    SequentialOptions,
)
from pytest_consistency.config.parse import (
    cause_limits,
    choice,
    confidence_level,
    file_path,
    fraction,
    judge_settings,
    judge_votes,
    match_rules,
    named_output,
    non_negative_int,
    non_negative_number,
    open_rate,
    parse_target,
    positive_int,
    regex,
    repetitions,
    shard_spec,
    text,
    timeout_seconds,
)
from pytest_consistency.stats.choices import TARGETS, TESTS

if TYPE_CHECKING:  # the options' types, read by mypy (and by a test through typing.get_type_hints), never at start-up
    from typing import Any, Literal

    from pytest_consistency.config.parse import Target as ResampleTarget
    from pytest_consistency.model.result import GateOn, Target

#: The cassette modes (``--consistency-record``), and those that record: they may call the model live (``none``
#: replays only; ``off`` has no cassette, and its calls may be another tool's replays, as pytest-recording's).
RECORD_MODES = ("none", "once", "new_episodes", "all", "off")
LIVE_MODES = ("once", "new_episodes", "all")


class GateOptions:
    """One option per gate of :data:`~pytest_consistency.analysis.gates.GATES` (each gate's option is the gate's,
    by this attribute's name; a test refuses a gate without one), and the cause gates' limits."""

    gap_max: Option[float | None] = gate_option()
    answer_disagreement_max: Option[float | None] = gate_option()
    pass_hat_k_min: Option[float | None] = gate_option()
    route_drift_max: Option[float | None] = gate_option()
    regressions_max: Option[int | None] = gate_option()
    gap_increase_max: Option[float | None] = gate_option()
    judge_flip_max: Option[float | None] = gate_option()
    mcnemar_p_min: Option[float | None] = gate_option()
    cause_max: Option[tuple[tuple[str, float], ...]] = Option(
        CAUSE_FLAG,
        ("gates", "cause_max"),
        cause_limits,
        "fail the session when the consistency gap attributed to CAUSE (route, input, environment, sampling, "
        "outside the model, judge) exceeds PP percentage points, e.g. input=0; give it once per cause",
        metavar="CAUSE=PP",
        default=(),
        is_list=True,
        dest=CAUSE_OPTION,
    )


GATE_OPTIONS = options_of(GateOptions)


class AnalysisOptions:
    """The intervals, how gates are decided, and the baseline."""

    confidence: Option[float] = Option(
        "--consistency-confidence",
        ("analysis", "confidence"),
        confidence_level,
        "confidence level of every interval and test (default 0.95)",
        metavar="LEVEL",
        default=0.95,
    )
    interval_target: Option[Target] = Option(
        "--consistency-interval-target",
        ("analysis", "target"),
        choice(*TARGETS),
        "what the suite intervals describe: suite (these tasks; repetition noise only; default) or population "
        "(tasks like these; task sampling too)",
        metavar="TARGET",
        default="suite",
    )
    gate_on: Option[GateOn] = Option(
        "--consistency-gate-on",
        ("gates", "on"),
        choice("point", "bound"),
        "decide gates on their one-sided bounds at the gate's level (bound, the default: a gate fails only on "
        "evidence, passes on evidence, and is undecided otherwise) or on the point estimate (point: no error "
        "control)",
        metavar="WHAT",
        default="bound",
    )
    inconclusive: Option[Literal["fail", "pass"]] = Option(
        "--consistency-inconclusive",
        ("gates", "inconclusive"),
        choice("fail", "pass"),
        "exit status of an undecided gate or min_rate task: pass (default: the run fails only on evidence) or fail "
        "(every gate and bar must be shown met)",
        metavar="AS",
        default="pass",
    )
    baseline: Option[str | None] = Option(
        "--consistency-baseline",
        ("baseline", "report"),
        file_path,
        "compare with an earlier JSON report (e.g. the main branch's): per-task regressions, gap change, route "
        "and token changes",
        metavar="FILE",
    )
    test: Option[Literal["boschloo", "fisher"]] = Option(
        "--consistency-test",
        ("baseline", "test"),
        choice(*TESTS),
        "one-sided exact test of a per-task regression against the baseline: boschloo (default) or fisher",
        metavar="TEST",
        default="boschloo",
    )
    suite_regression: Option[bool | None] = Option(
        "--consistency-suite-regression",
        ("baseline", "suite_regression"),
        choice("true", "false"),
        "fail the session when the suite-level exact stratified test finds a drop in the pass rate over the tasks "
        "both runs share (one-sided; on by default whenever --consistency-baseline is given, and then required; "
        "--no-consistency-suite-regression switches it off)",
        is_flag=True,
        negation="--no-consistency-suite-regression",
    )


ANALYSIS_OPTIONS = options_of(AnalysisOptions)

#: The YAML file a session reads when no ``--consistency-config`` (or ini ``consistency_config``) names one: this
#: name in rootdir, when it is there (the ``pytest-consistency`` command looks in the current directory).
CONFIG_FILE = "consistency.yaml"


class CoreOptions:
    """The repetitions, the default bars, shards and the outputs."""

    config: Option[str] = Option(
        "--consistency-config",
        (),
        file_path,
        f"YAML file with consistency settings (gates, repeat, route, cassettes); CLI options override it (default: "
        f"{CONFIG_FILE} in rootdir, when it exists)",
        metavar="FILE",
        default=CONFIG_FILE,
    )
    repeat: Option[int | None] = Option(
        "--consistency-repeat",
        ("repeat",),
        repetitions,
        f"override n of every repeat_consistency marker (at most {MAX_REPETITIONS})",
        metavar="N",
    )
    min_pass: Option[float | None] = Option(
        "--consistency-min-pass",
        ("min_pass",),
        fraction,
        "default min_pass for markers that do not set it: the pass rate at which a task passes as a whole",
        metavar="F",
    )
    min_rate: Option[float | None] = Option(
        "--consistency-min-rate",
        ("min_rate",),
        open_rate,
        "default min_rate for markers that set neither min_pass nor min_rate: a task passes when its repetitions "
        "show a rate of at least F, fails when they show it is below, and is undecided otherwise",
        metavar="F",
    )
    shard: Option[tuple[int, int] | None] = Option(
        "--consistency-shard",
        ("shard",),
        shard_spec,
        "run shard I of N (e.g. 2/4), every repetition of a task in one shard; its verdicts and gates are decided "
        "once, by `pytest-consistency merge` of every shard's report, so a shard exits 0 unless something broke",
        metavar="I/N",
    )
    report: Option[str | None] = Option(
        "--consistency-report",
        ("report",),
        file_path,
        "write the machine-readable JSON report to FILE",
        metavar="FILE",
    )
    md: Option[str | None] = Option(
        "--consistency-md",
        ("outputs", "markdown"),
        file_path,
        "write the Markdown summary to FILE (it is also appended to $GITHUB_STEP_SUMMARY when that is set)",
        metavar="FILE",
    )
    no_md: Option[bool] = Option(
        "--no-consistency-md",
        ("outputs", "no_step_summary"),
        choice("true", "false"),
        "do not append the Markdown summary to $GITHUB_STEP_SUMMARY",
        is_flag=True,
    )
    html: Option[str | None] = Option(
        "--consistency-html",
        ("outputs", "html"),
        file_path,
        "write the self-contained HTML page (tasks x repetitions grid, routes, answers) to FILE",
        metavar="FILE",
    )
    output: Option[str | None] = Option(
        "--consistency-output",
        ("outputs", "other"),
        named_output,
        "write the report format NAME (built in: terminal, json, markdown, html, junit; or one a "
        "pytest_consistency_report_format hook provides) to FILE",
        metavar="NAME=FILE",
    )


CORE_OPTIONS = options_of(CoreOptions)


class RouteOptions:
    """The routes (OpenAI-compatible, Anthropic) and their clients, the budgets and limits of live calls."""

    base_url: Option[str | None] = Option(
        "--consistency-base-url",
        ("route", "base_url"),
        text,
        "base URL of the OpenAI-compatible API for every repetition (else OPENAI_BASE_URL, else OpenAI's)",
        metavar="URL",
    )
    model: Option[str | None] = Option(
        "--consistency-model",
        ("route", "model"),
        text,
        "model id applied to every request that does not name one",
        metavar="MODEL",
    )
    api_key_env: Option[str] = Option(
        "--consistency-api-key-env",
        ("route", "api_key_env"),
        text,
        "name of the environment variable that holds the API key (default OPENAI_API_KEY); "
        "keys are never taken on the command line",
        metavar="VAR",
        default="OPENAI_API_KEY",
    )
    timeout: Option[float] = Option(
        "--consistency-timeout",
        ("route", "timeout"),
        timeout_seconds,
        "request timeout in seconds (default 60, at most 86400)",
        metavar="SECONDS",
        default=60.0,
    )
    max_retries: Option[int] = Option(
        "--consistency-max-retries",
        ("route", "max_retries"),
        non_negative_int,
        "SDK retries per request (default 1)",
        metavar="N",
        default=1,
    )
    temperature: Option[float | None] = Option(
        "--consistency-temperature",
        ("route", "temperature"),
        non_negative_number,
        "temperature applied to requests that do not set one",
        metavar="T",
    )
    max_tokens: Option[int | None] = Option(
        "--consistency-max-tokens",
        ("route", "max_tokens"),
        positive_int,
        "max_tokens applied to model requests that set no limit (max_output_tokens on the Responses API): an agent "
        "that sets none may run hundreds of tokens, and minutes, a call",
        metavar="N",
    )
    seed: Option[int | None] = Option(
        "--consistency-seed",
        ("route", "seed"),
        non_negative_int,
        "seed applied to requests that do not set one",
        metavar="SEED",
    )
    retries_max: Option[int | None] = Option(
        "--consistency-retries-max",
        ("route", "retries_max"),
        non_negative_int,
        "retries per request above which a repetition counts as route drift (default: the route's max_retries)",
        metavar="N",
    )
    token_budget: Option[int | None] = Option(
        "--consistency-token-budget",
        ("route", "token_budget"),
        positive_int,
        "stop making live calls once the session used more than N tokens, and fail the session",
        metavar="N",
    )
    preflight: Option[bool | None] = Option(
        "--consistency-preflight",
        ("route", "preflight"),
        choice("true", "false"),
        "make one minimal request per route the selected tests use, after collection and before the first test, "
        "and abort on a broken route (on by default when the session records live without xdist: "
        "--consistency-record=all, or once and new_episodes with a cassette missing; a replay sends nothing; "
        "--no-consistency-preflight switches it off)",
        is_flag=True,
        negation="--no-consistency-preflight",
    )
    concurrency: Option[int | None] = Option(
        "--consistency-concurrency",
        ("route", "concurrency"),
        positive_int,
        "at most N live requests in flight per route at once, across every xdist worker of the session (replays "
        "are never held back); time spent waiting is reported per repetition and kept out of latency",
        metavar="N",
    )
    rpm: Option[int | None] = Option(
        "--consistency-rpm",
        ("route", "rpm"),
        positive_int,
        "start at most N live requests per minute per route, across every xdist worker of the session",
        metavar="N",
    )
    anthropic_base_url: Option[str | None] = Option(
        "--consistency-anthropic-base-url",
        ("routes", "anthropic", "base_url"),
        text,
        "base URL of the Anthropic route, without /v1 (else ANTHROPIC_BASE_URL, else https://api.anthropic.com)",
        metavar="URL",
    )
    anthropic_model: Option[str | None] = Option(
        "--consistency-anthropic-model",
        ("routes", "anthropic", "model"),
        text,
        "model id of the Anthropic route, applied to requests that do not name one (else ANTHROPIC_MODEL)",
        metavar="MODEL",
    )
    anthropic_key_env: Option[str | None] = Option(
        "--consistency-anthropic-key-env",
        ("routes", "anthropic", "api_key_env"),
        text,
        "environment variable holding the Anthropic token (default: ANTHROPIC_AUTH_TOKEN, else ANTHROPIC_API_KEY)",
        metavar="VAR",
    )
    same_gateway: Option[bool] = Option(
        "--consistency-same-gateway",
        ("routes", "same_gateway"),
        choice("true", "false"),
        "the OpenAI and Anthropic routes must reach the same gateway (scheme, host and port): refuse the session "
        "before any call when their base URLs point at different ones",
        is_flag=True,
    )
    ignore_url: Option[str | None] = Option(
        "--consistency-ignore-url",
        ("route", "ignore_url"),
        regex,
        "regular expression of request URLs that are neither recorded, replayed nor counted (background "
        "telemetry, e.g. /traces/ingest); join several with |",
        metavar="REGEX",
    )
    judge: Option[tuple[tuple[str, Any], ...]] = Option(
        "--consistency-judge",
        ("judge",),
        judge_settings,
        "the judge's route (judge_client, anthropic_judge_client) where it differs from the agent route's: base_url, "
        "model, api_key_env (the variable holding its key), temperature; in YAML a mapping judge: {model: ...}",
        metavar="NAME=VALUE",
        default=(),
        is_list=True,
    )


ROUTE_OPTIONS = options_of(RouteOptions)


class CassetteOptions:
    """The per-repetition cassettes."""

    cassettes: Option[str] = Option(
        "--consistency-cassettes",
        ("cassettes", "dir"),
        file_path,
        "directory of the per-repetition cassettes (default: cassettes under rootdir)",
        metavar="DIR",
        default="cassettes",
    )
    cassette_format: Option[Literal["yaml", "json"]] = Option(
        "--consistency-cassette-format",
        ("cassettes", "format"),
        choice("yaml", "json"),
        "file format of the cassettes written and read: yaml (rep-<i>.yaml; default) or json (rep-<i>.json, "
        "parsed about 5 times faster; convert existing ones with: pytest-consistency cassettes convert --to json)",
        metavar="FORMAT",
        default="yaml",
    )
    record: Option[Literal["none", "once", "new_episodes", "all", "off"]] = Option(
        "--consistency-record",
        ("cassettes", "record"),
        choice(*RECORD_MODES),
        "cassette mode: none (replay only, network blocked; default), once, new_episodes, all (re-record), "
        "off (no cassettes, live calls)",
        metavar="MODE",
        default="none",
    )
    match_ignore: Option[tuple[str, ...]] = Option(
        "--consistency-match-ignore",
        ("cassettes", "match_ignore"),
        match_rules,
        "leave a part of request bodies out of replay matching: a JSON path (messages.*.name; * is any key or "
        "index) or re:REGEX (masked in every string: a timestamp, a random id); give it once per rule",
        metavar="RULE",
        default=(),
        is_list=True,
    )
    replay_any_host: Option[bool] = Option(
        "--consistency-replay-any-host",
        ("cassettes", "replay_any_host"),
        choice("true", "false"),
        "replay matching leaves out a request's scheme, host and port (a local server on another port, a dev "
        "gateway): the path, query, body and key still match, and each call's record keeps the URL it was "
        "recorded at",
        is_flag=True,
    )
    record_on_exception: Option[bool] = Option(
        "--consistency-record-on-exception",
        ("cassettes", "record_on_exception"),
        choice("true", "false"),
        "keep the cassette of a repetition that raised something other than an assertion (default: drop it)",
        is_flag=True,
    )


CASSETTE_OPTIONS = options_of(CassetteOptions)


class ResampleOptions:
    """The session modes: resampling a step, re-judging."""

    resample: Option[ResampleTarget | None] = Option(
        "--consistency-resample",
        ("resample", "step"),
        parse_target,
        "resample step STEP of task TASK (the task id as the report prints it) from a recorded repetition's exact "
        "prefix: its first STEP-1 calls replay from its cassette, step STEP and the rest run M times "
        "(docs/trajectory.md)",
        metavar="TASK@STEP",
    )
    resample_n: Option[int] = Option(
        "--consistency-resample-n",
        ("resample", "n"),
        repetitions,
        "with --consistency-resample: the number of samples M (default 10)",
        metavar="M",
        default=10,
    )
    resample_from: Option[int] = Option(
        "--consistency-resample-from",
        ("resample", "from"),
        repetitions,
        "with --consistency-resample: the repetition whose prefix is replayed (default 1, the first)",
        metavar="REP",
        default=1,
    )
    rejudge: Option[int | None] = Option(
        "--consistency-rejudge",
        ("rejudge", "samples"),
        repetitions,
        "re-judge every marked task's recorded repetitions M times each: the agent's calls replay from each "
        "repetition's cassette (none goes out), only the judge is asked again (docs/judges.md)",
        metavar="M",
    )
    judge_votes: Option[int | None] = Option(
        "--consistency-judge-votes",
        ("rejudge", "votes"),
        judge_votes,
        "decide each recorded repetition's outcome by the majority of M judge samples (M odd), asked one at a time "
        "until the majority is decided: the agent's calls replay from each repetition's cassette (none goes out), "
        "and the figures and gates read the majority outcomes (docs/judges.md)",
        metavar="M",
    )
    rejudge_role: Option[Literal["judge", "agent"]] = Option(
        "--consistency-rejudge-role",
        ("rejudge", "role"),
        choice("judge", "agent"),
        "with --consistency-rejudge: the role sampled M times per recorded repetition: judge (the agent's and a "
        "simulated user's calls replay), or agent (the simulated user's turns replay in order, the agent and the "
        "judge are asked again: the gap split between agent and simulated user; docs/judges.md)",
        metavar="ROLE",
        default="judge",
    )


RESAMPLE_OPTIONS = options_of(ResampleOptions)


class TraceOptions:
    """OpenTelemetry traces of the session (docs/traces.md); the exporter is configured by the OTEL_* variables."""

    otel: Option[bool] = Option(
        "--consistency-otel",
        ("otel",),
        choice("true", "false"),
        "export the session as OpenTelemetry traces over OTLP (a trace per task: its repetitions and each model "
        "call as GenAI spans), to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318); needs the otel extra",
        is_flag=True,
    )
    otel_content: Option[bool] = Option(
        "--consistency-otel-content",
        ("otel_content",),
        choice("true", "false"),
        "with --consistency-otel: put the prompts and completions on the model-call spans (redacted like every "
        "output; off by default, as the GenAI conventions ask)",
        is_flag=True,
    )
    run_id: Option[str | None] = Option(
        "--consistency-run-id",
        ("run_id",),
        text,
        "the run this session is part of (default: the CI's run id, e.g. GITHUB_RUN_ID, else random): shards given "
        "the same one put each task's spans in the same trace",
        metavar="ID",
    )


TRACE_OPTIONS = options_of(TraceOptions)

#: The outputs besides the JSON report (Markdown, the step summary switch, HTML, any format): also ``merge``'s.
OUTPUT_OPTIONS = tuple(option for option in CORE_OPTIONS if option.yaml_path[:1] == ("outputs",))


class Options(
    CoreOptions,
    GateOptions,
    AnalysisOptions,
    AdaptiveOptions,
    SequentialOptions,
    RouteOptions,
    CostOptions,
    CassetteOptions,
    ResampleOptions,
    TraceOptions,
):
    """Every group, in the order of the option reference's groups (``reference.GROUPS``, which a test keeps in
    step): ``Settings`` is this class with the values."""


#: Every option, in that order.
OPTIONS = tuple(option for group in Options.__bases__ for option in options_of(group))
BY_DEST = {option.dest: option for option in OPTIONS}
#: Every option by its name (the settings' attribute).
BY_NAME = {option.name: option for option in OPTIONS}
#: The groups ``pytest --help`` shows, each its own argparse group: pytest checks each new flag against every flag of
#: its group, so one group of them all cost a quadratic check at every start, the plugin asleep too (0.3 ms).
HELP_GROUPS = (
    ("", CORE_OPTIONS),
    ("gates", GATE_OPTIONS),
    ("intervals and baselines", ANALYSIS_OPTIONS),
    ("adaptive repetitions", ADAPTIVE_OPTIONS),
    ("sequential verdicts", SEQUENTIAL_OPTIONS),
    ("routes and clients", ROUTE_OPTIONS),
    ("cost", COST_OPTIONS),
    ("cassettes", CASSETTE_OPTIONS),
    ("resampling a step", RESAMPLE_OPTIONS),
    ("traces", TRACE_OPTIONS),
)
