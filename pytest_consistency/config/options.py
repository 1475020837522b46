"""Every option of the plugin, declared once, with its command-line flag, ini key and YAML key.

One table drives ``pytest_addoption`` (``plugin.dormant.add_options``), the ini and YAML parsing and the precedence
CLI > YAML > ini > default (:mod:`.settings`), and the options of the ``pytest-consistency`` command (:mod:`.cli`), so
an option cannot exist in one place and be forgotten in another. Values are validated by the same function wherever
they come from (:mod:`.parse`), and an invalid one is an error naming where it came from. Nothing here imports pytest.

Every pytest start with the plugin installed imports this module and registers the table, a session that never uses
the plugin too (``plugin.dormant``): so it builds no dataclass (``dataclasses`` compiles the methods of each class it
makes, about 1 ms a class), nor do the modules it imports (the gates, the parsers, the marker).
"""

from __future__ import annotations

from pytest_consistency.analysis.gates import CAUSE_FLAG, CAUSE_OPTION, GATES, Gate
from pytest_consistency.config.marker import MAX_REPETITIONS
from pytest_consistency.config.option import Option
from pytest_consistency.config.options_cost import COST_OPTIONS
from pytest_consistency.config.options_sequential import SEQUENTIAL_OPTIONS
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
    percentage,
    positive_int,
    regex,
    repetitions,
    shard_spec,
    text,
    timeout_seconds,
)
from pytest_consistency.stats.choices import TARGETS, TESTS

#: The cassette modes (``--consistency-record``), and those that record: they may call the model live (``none``
#: replays only; ``off`` has no cassette, and its calls may be another tool's replays, as pytest-recording's).
RECORD_MODES = ("none", "once", "new_episodes", "all", "off")
LIVE_MODES = ("once", "new_episodes", "all")


def _gate_option(gate: Gate) -> Option:
    parse = non_negative_int if gate.count else fraction if gate.probability else percentage
    return Option(gate.dest, gate.flag, ("gates", gate.dest), parse, gate.help, metavar=gate.metavar)


#: One option per gate of :data:`~pytest_consistency.analysis.gates.GATES`: a gate is declared once, there.
GATE_OPTIONS = (
    *(_gate_option(gate) for gate in GATES),
    Option(
        CAUSE_OPTION,
        CAUSE_FLAG,
        ("gates", "cause_max"),
        cause_limits,
        "fail the session when the consistency gap attributed to CAUSE (route, input, environment, sampling, "
        "outside the model, judge) exceeds PP percentage points, e.g. input=0; give it once per cause",
        metavar="CAUSE=PP",
        default=(),
        is_list=True,
    ),
)

ANALYSIS_OPTIONS = (
    Option(
        "consistency_confidence",
        "--consistency-confidence",
        ("analysis", "confidence"),
        confidence_level,
        "confidence level of every interval and test (default 0.95)",
        metavar="LEVEL",
        default=0.95,
    ),
    Option(
        "consistency_interval_target",
        "--consistency-interval-target",
        ("analysis", "target"),
        choice(*TARGETS),
        "what the suite intervals describe: suite (these tasks; repetition noise only; default) or population "
        "(tasks like these; task sampling too)",
        metavar="TARGET",
        default="suite",
    ),
    Option(
        "consistency_gate_on",
        "--consistency-gate-on",
        ("gates", "on"),
        choice("point", "bound"),
        "decide gates on their one-sided bounds at the gate's level (bound, the default: a gate fails only on "
        "evidence, passes on evidence, and is undecided otherwise) or on the point estimate (point: no error "
        "control)",
        metavar="WHAT",
        default="bound",
    ),
    Option(
        "consistency_inconclusive",
        "--consistency-inconclusive",
        ("gates", "inconclusive"),
        choice("fail", "pass"),
        "exit status of an undecided gate or min_rate task: pass (default: the run fails only on evidence) or fail "
        "(every gate and bar must be shown met)",
        metavar="AS",
        default="pass",
    ),
    Option(
        "consistency_baseline",
        "--consistency-baseline",
        ("baseline", "report"),
        file_path,
        "compare with an earlier JSON report (e.g. the main branch's): per-task regressions, gap change, route "
        "and token changes",
        metavar="FILE",
    ),
    Option(
        "consistency_test",
        "--consistency-test",
        ("baseline", "test"),
        choice(*TESTS),
        "one-sided exact test of a per-task regression against the baseline: boschloo (default) or fisher",
        metavar="TEST",
        default="boschloo",
    ),
    Option(
        "consistency_suite_regression",
        "--consistency-suite-regression",
        ("baseline", "suite_regression"),
        choice("true", "false"),
        "fail the session when the suite-level exact stratified test finds a drop in the pass rate over the tasks "
        "both runs share (one-sided; on by default whenever --consistency-baseline is given, and then required; "
        "--no-consistency-suite-regression switches it off)",
        is_flag=True,
        negation="--no-consistency-suite-regression",
    ),
)

#: The YAML file a session reads when no ``--consistency-config`` (or ini ``consistency_config``) names one: this
#: name in rootdir, when it is there (the ``pytest-consistency`` command looks in the current directory).
CONFIG_FILE = "consistency.yaml"

CORE_OPTIONS = (
    Option(
        "consistency_config",
        "--consistency-config",
        (),
        file_path,
        f"YAML file with consistency settings (gates, repeat, route, cassettes); CLI options override it (default: "
        f"{CONFIG_FILE} in rootdir, when it exists)",
        metavar="FILE",
        default=CONFIG_FILE,
    ),
    Option(
        "consistency_repeat",
        "--consistency-repeat",
        ("repeat",),
        repetitions,
        f"override n of every repeat_consistency marker (at most {MAX_REPETITIONS})",
        metavar="N",
    ),
    Option(
        "consistency_min_pass",
        "--consistency-min-pass",
        ("min_pass",),
        fraction,
        "default min_pass for markers that do not set it: the pass rate at which a task passes as a whole",
        metavar="F",
    ),
    Option(
        "consistency_min_rate",
        "--consistency-min-rate",
        ("min_rate",),
        open_rate,
        "default min_rate for markers that set neither min_pass nor min_rate: a task passes when its repetitions "
        "show a rate of at least F, fails when they show it is below, and is undecided otherwise",
        metavar="F",
    ),
    Option(
        "consistency_shard",
        "--consistency-shard",
        ("shard",),
        shard_spec,
        "run shard I of N (e.g. 2/4), every repetition of a task in one shard; its verdicts and gates are decided "
        "once, by `pytest-consistency merge` of every shard's report, so a shard exits 0 unless something broke",
        metavar="I/N",
    ),
    Option(
        "consistency_report",
        "--consistency-report",
        ("report",),
        file_path,
        "write the machine-readable JSON report to FILE",
        metavar="FILE",
    ),
    Option(
        "consistency_md",
        "--consistency-md",
        ("outputs", "markdown"),
        file_path,
        "write the Markdown summary to FILE (it is also appended to $GITHUB_STEP_SUMMARY when that is set)",
        metavar="FILE",
    ),
    Option(
        "consistency_no_md",
        "--no-consistency-md",
        ("outputs", "no_step_summary"),
        choice("true", "false"),
        "do not append the Markdown summary to $GITHUB_STEP_SUMMARY",
        is_flag=True,
    ),
    Option(
        "consistency_html",
        "--consistency-html",
        ("outputs", "html"),
        file_path,
        "write the self-contained HTML page (tasks x repetitions grid, routes, answers) to FILE",
        metavar="FILE",
    ),
    Option(
        "consistency_output",
        "--consistency-output",
        ("outputs", "other"),
        named_output,
        "write the report format NAME (built in: terminal, json, markdown, html, junit; or one a "
        "pytest_consistency_report_format hook provides) to FILE",
        metavar="NAME=FILE",
    ),
)

ROUTE_OPTIONS = (
    Option(
        "consistency_base_url",
        "--consistency-base-url",
        ("route", "base_url"),
        text,
        "base URL of the OpenAI-compatible API for every repetition (else OPENAI_BASE_URL, else OpenAI's)",
        metavar="URL",
    ),
    Option(
        "consistency_model",
        "--consistency-model",
        ("route", "model"),
        text,
        "model id applied to every request that does not name one",
        metavar="MODEL",
    ),
    Option(
        "consistency_api_key_env",
        "--consistency-api-key-env",
        ("route", "api_key_env"),
        text,
        "name of the environment variable that holds the API key (default OPENAI_API_KEY); "
        "keys are never taken on the command line",
        metavar="VAR",
        default="OPENAI_API_KEY",
    ),
    Option(
        "consistency_timeout",
        "--consistency-timeout",
        ("route", "timeout"),
        timeout_seconds,
        "request timeout in seconds (default 60, at most 86400)",
        metavar="SECONDS",
        default=60.0,
    ),
    Option(
        "consistency_max_retries",
        "--consistency-max-retries",
        ("route", "max_retries"),
        non_negative_int,
        "SDK retries per request (default 1)",
        metavar="N",
        default=1,
    ),
    Option(
        "consistency_temperature",
        "--consistency-temperature",
        ("route", "temperature"),
        non_negative_number,
        "temperature applied to requests that do not set one",
        metavar="T",
    ),
    Option(
        "consistency_max_tokens",
        "--consistency-max-tokens",
        ("route", "max_tokens"),
        positive_int,
        "max_tokens applied to model requests that set no limit (max_output_tokens on the Responses API): an agent "
        "that sets none may run hundreds of tokens, and minutes, a call",
        metavar="N",
    ),
    Option(
        "consistency_seed",
        "--consistency-seed",
        ("route", "seed"),
        non_negative_int,
        "seed applied to requests that do not set one",
        metavar="SEED",
    ),
    Option(
        "consistency_retries_max",
        "--consistency-retries-max",
        ("route", "retries_max"),
        non_negative_int,
        "retries per request above which a repetition counts as route drift (default: the route's max_retries)",
        metavar="N",
    ),
    Option(
        "consistency_token_budget",
        "--consistency-token-budget",
        ("route", "token_budget"),
        positive_int,
        "stop making live calls once the session used more than N tokens, and fail the session",
        metavar="N",
    ),
    Option(
        "consistency_preflight",
        "--consistency-preflight",
        ("route", "preflight"),
        choice("true", "false"),
        "make one minimal request per route the selected tests use, after collection and before the first test, "
        "and abort on a broken route (on by default when the session records live without xdist: "
        "--consistency-record=all, or once and new_episodes with a cassette missing; a replay sends nothing; "
        "--no-consistency-preflight switches it off)",
        is_flag=True,
        negation="--no-consistency-preflight",
    ),
    Option(
        "consistency_concurrency",
        "--consistency-concurrency",
        ("route", "concurrency"),
        positive_int,
        "at most N live requests in flight per route at once, across every xdist worker of the session (replays "
        "are never held back); time spent waiting is reported per repetition and kept out of latency",
        metavar="N",
    ),
    Option(
        "consistency_rpm",
        "--consistency-rpm",
        ("route", "rpm"),
        positive_int,
        "start at most N live requests per minute per route, across every xdist worker of the session",
        metavar="N",
    ),
    Option(
        "consistency_anthropic_base_url",
        "--consistency-anthropic-base-url",
        ("routes", "anthropic", "base_url"),
        text,
        "base URL of the Anthropic route, without /v1 (else ANTHROPIC_BASE_URL, else https://api.anthropic.com)",
        metavar="URL",
    ),
    Option(
        "consistency_anthropic_model",
        "--consistency-anthropic-model",
        ("routes", "anthropic", "model"),
        text,
        "model id of the Anthropic route, applied to requests that do not name one (else ANTHROPIC_MODEL)",
        metavar="MODEL",
    ),
    Option(
        "consistency_anthropic_key_env",
        "--consistency-anthropic-key-env",
        ("routes", "anthropic", "api_key_env"),
        text,
        "environment variable holding the Anthropic token (default: ANTHROPIC_AUTH_TOKEN, else ANTHROPIC_API_KEY)",
        metavar="VAR",
    ),
    Option(
        "consistency_same_gateway",
        "--consistency-same-gateway",
        ("routes", "same_gateway"),
        choice("true", "false"),
        "the OpenAI and Anthropic routes must reach the same gateway (scheme, host and port): refuse the session "
        "before any call when their base URLs point at different ones",
        is_flag=True,
    ),
    Option(
        "consistency_ignore_url",
        "--consistency-ignore-url",
        ("route", "ignore_url"),
        regex,
        "regular expression of request URLs that are neither recorded, replayed nor counted (background "
        "telemetry, e.g. /traces/ingest); join several with |",
        metavar="REGEX",
    ),
    Option(
        "consistency_judge",
        "--consistency-judge",
        ("judge",),
        judge_settings,
        "the judge's route (judge_client, anthropic_judge_client) where it differs from the agent route's: base_url, "
        "model, api_key_env (the variable holding its key), temperature; in YAML a mapping judge: {model: ...}",
        metavar="NAME=VALUE",
        default=(),
        is_list=True,
    ),
)

ADAPTIVE_OPTIONS = (
    Option(
        "consistency_adaptive",
        "--consistency-adaptive",
        ("adaptive", "enabled"),
        choice("true", "false"),
        "stop repeating a task once its verdict (min_pass or min_rate) can no longer change: the same verdicts, "
        "fewer calls",
        is_flag=True,
    ),
    Option(
        "consistency_n_min",
        "--consistency-n-min",
        ("adaptive", "n_min"),
        repetitions,
        "with --consistency-adaptive or --consistency-sequential: run at least N repetitions of every task (default 1)",
        metavar="N",
        default=1,
    ),
)

CASSETTE_OPTIONS = (
    Option(
        "consistency_cassettes",
        "--consistency-cassettes",
        ("cassettes", "dir"),
        file_path,
        "directory of the per-repetition cassettes (default: cassettes under rootdir)",
        metavar="DIR",
        default="cassettes",
    ),
    Option(
        "consistency_cassette_format",
        "--consistency-cassette-format",
        ("cassettes", "format"),
        choice("yaml", "json"),
        "file format of the cassettes written and read: yaml (rep-<i>.yaml; default) or json (rep-<i>.json, "
        "parsed about 5 times faster; convert existing ones with: pytest-consistency cassettes convert --to json)",
        metavar="FORMAT",
        default="yaml",
    ),
    Option(
        "consistency_record",
        "--consistency-record",
        ("cassettes", "record"),
        choice(*RECORD_MODES),
        "cassette mode: none (replay only, network blocked; default), once, new_episodes, all (re-record), "
        "off (no cassettes, live calls)",
        metavar="MODE",
        default="none",
    ),
    Option(
        "consistency_match_ignore",
        "--consistency-match-ignore",
        ("cassettes", "match_ignore"),
        match_rules,
        "leave a part of request bodies out of replay matching: a JSON path (messages.*.name; * is any key or "
        "index) or re:REGEX (masked in every string: a timestamp, a random id); give it once per rule",
        metavar="RULE",
        default=(),
        is_list=True,
    ),
    Option(
        "consistency_replay_any_host",
        "--consistency-replay-any-host",
        ("cassettes", "replay_any_host"),
        choice("true", "false"),
        "replay matching leaves out a request's scheme, host and port (a local server on another port, a dev "
        "gateway): the path, query, body and key still match, and each call's record keeps the URL it was "
        "recorded at",
        is_flag=True,
    ),
    Option(
        "consistency_record_on_exception",
        "--consistency-record-on-exception",
        ("cassettes", "record_on_exception"),
        choice("true", "false"),
        "keep the cassette of a repetition that raised something other than an assertion (default: drop it)",
        is_flag=True,
    ),
)


RESAMPLE_OPTIONS = (
    Option(
        "consistency_resample",
        "--consistency-resample",
        ("resample", "step"),
        parse_target,
        "resample step STEP of task TASK (the task id as the report prints it) from a recorded repetition's exact "
        "prefix: its first STEP-1 calls replay from its cassette, step STEP and the rest run M times "
        "(docs/trajectory.md)",
        metavar="TASK@STEP",
    ),
    Option(
        "consistency_resample_n",
        "--consistency-resample-n",
        ("resample", "n"),
        repetitions,
        "with --consistency-resample: the number of samples M (default 10)",
        metavar="M",
        default=10,
    ),
    Option(
        "consistency_resample_from",
        "--consistency-resample-from",
        ("resample", "from"),
        repetitions,
        "with --consistency-resample: the repetition whose prefix is replayed (default 1, the first)",
        metavar="REP",
        default=1,
    ),
    Option(
        "consistency_rejudge",
        "--consistency-rejudge",
        ("rejudge", "samples"),
        repetitions,
        "re-judge every marked task's recorded repetitions M times each: the agent's calls replay from each "
        "repetition's cassette (none goes out), only the judge is asked again (docs/judges.md)",
        metavar="M",
    ),
    Option(
        "consistency_judge_votes",
        "--consistency-judge-votes",
        ("rejudge", "votes"),
        judge_votes,
        "decide each recorded repetition's outcome by the majority of M judge samples (M odd), asked one at a time "
        "until the majority is decided: the agent's calls replay from each repetition's cassette (none goes out), "
        "and the figures and gates read the majority outcomes (docs/judges.md)",
        metavar="M",
    ),
    Option(
        "consistency_rejudge_role",
        "--consistency-rejudge-role",
        ("rejudge", "role"),
        choice("judge", "agent"),
        "with --consistency-rejudge: the role sampled M times per recorded repetition: judge (the agent's and a "
        "simulated user's calls replay), or agent (the simulated user's turns replay in order, the agent and the "
        "judge are asked again: the gap split between agent and simulated user; docs/judges.md)",
        metavar="ROLE",
        default="judge",
    ),
)

#: OpenTelemetry traces of the session (docs/traces.md); the exporter itself is configured by the OTEL_* variables.
TRACE_OPTIONS = (
    Option(
        "consistency_otel",
        "--consistency-otel",
        ("otel",),
        choice("true", "false"),
        "export the session as OpenTelemetry traces over OTLP (a trace per task: its repetitions and each model "
        "call as GenAI spans), to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318); needs the otel extra",
        is_flag=True,
    ),
    Option(
        "consistency_otel_content",
        "--consistency-otel-content",
        ("otel_content",),
        choice("true", "false"),
        "with --consistency-otel: put the prompts and completions on the model-call spans (redacted like every "
        "output; off by default, as the GenAI conventions ask)",
        is_flag=True,
    ),
    Option(
        "consistency_run_id",
        "--consistency-run-id",
        ("run_id",),
        text,
        "the run this session is part of (default: the CI's run id, e.g. GITHUB_RUN_ID, else random): shards given "
        "the same one put each task's spans in the same trace",
        metavar="ID",
    ),
)

#: The outputs besides the JSON report (Markdown, the step summary switch, HTML, any format): also ``merge``'s.
OUTPUT_OPTIONS = tuple(option for option in CORE_OPTIONS if option.yaml_path[:1] == ("outputs",))


#: Every option, in the order of the option reference's groups (``reference.GROUPS``, which a test keeps in step).
OPTIONS = (
    *CORE_OPTIONS,
    *GATE_OPTIONS,
    *ANALYSIS_OPTIONS,
    *ADAPTIVE_OPTIONS,
    *SEQUENTIAL_OPTIONS,
    *ROUTE_OPTIONS,
    *COST_OPTIONS,
    *CASSETTE_OPTIONS,
    *RESAMPLE_OPTIONS,
    *TRACE_OPTIONS,
)
BY_DEST = {option.dest: option for option in OPTIONS}
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
