"""First contact: a usage error prints only itself and writes nothing; a first run without cassettes says how to record
each task (no drift, no figures); an unreachable route is one line, not the SDK's tracebacks, and the setup's failure.

Real sessions through ``pytester`` against the tests' loopback OpenAI-compatible server, or a port nothing listens on.
"""

from __future__ import annotations

import pytest
from fake_openai import GOOD_KEY, FakeOpenAI

#: A port nothing listens on (the discard port; no test server binds it).
UNREACHABLE = "http://127.0.0.1:9/v1"

TASK = """
import pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(pinned_client, consistency):
    reply = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "list the widgets"}])
    consistency.record(reply.choices[0].message.content)
"""

#: What the previous run wrote: a usage error must leave every output as it was.
PREVIOUS = {"report.json": '{"previous": true}\n', "summary.md": "previous summary\n", "page.html": "<p>previous</p>\n"}


def previous_outputs(pytester: pytest.Pytester) -> list[str]:
    for name, text in PREVIOUS.items():
        (pytester.path / name).write_text(text)
    return ["--consistency-report=report.json", "--consistency-md=summary.md", "--consistency-html=page.html"]


def assert_outputs_untouched(pytester: pytest.Pytester) -> None:
    for name, text in PREVIOUS.items():
        assert (pytester.path / name).read_text() == text, name


@pytest.fixture(autouse=True)
def _keyed(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY)
    for variable in ("CI", "BUILD_NUMBER", "GITHUB_STEP_SUMMARY"):  # pytest's own test of running on CI
        monkeypatch.delenv(variable, raising=False)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_agent=TASK)


def test_a_failed_preflight_prints_only_itself_and_writes_no_output(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        f"--consistency-base-url={UNREACHABLE}",
        "--consistency-model=fake-model",
        "--consistency-record=once",
        "--consistency-preflight",
        *previous_outputs(pytester),
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: preflight: cannot connect to {UNREACHABLE}*"])
    out = result.stdout.str()
    assert "consistency" not in out.split("collected", 1)[-1], out  # no summary, no closing line
    assert "not measurable" not in out and "FAILED" not in out
    assert_outputs_untouched(pytester)
    assert not (pytester.path / "cassettes").exists()


def test_a_refused_route_prints_only_itself_and_writes_no_output(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--consistency-base-url=ftp://127.0.0.1/v1",
        "--consistency-model=fake-model",
        "--consistency-record=once",
        *previous_outputs(pytester),
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-consistency: the pinned route cannot be used:", "*not an http(s) URL*"])
    assert "consistency" not in result.stdout.str().split("collected", 1)[-1]
    assert_outputs_untouched(pytester)


def test_a_passing_preflight_prints_one_line(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    result = pytester.runpytest(
        f"--consistency-base-url={fake.base_url}",
        "--consistency-model=fake-model",
        "--consistency-record=once",
        "--consistency-preflight",
    )
    assert result.ret == 0, result.stdout.str()
    lines = [line for line in result.stdout.lines if line.startswith("preflight:")]
    assert len(lines) == 1, result.stdout.str()
    assert lines[0].startswith(f"preflight: {fake.base_url} model fake-model ok (")
    assert lines[0].endswith(" ms)")


# A first run: no cassette for a task at all.

TWO_TASKS = (
    TASK
    + """
@pytest.mark.parametrize("city", ["Oslo", "Lima"])
@pytest.mark.repeat_consistency(n=2)
def test_weather(pinned_client, consistency, city):
    reply = pinned_client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": f"weather in {city}"}])
    consistency.record(reply.choices[0].message.content)
"""
)


def record_line(task: str, folder: str, function: str) -> str:
    return (
        f"{task}: not recorded yet: no cassette under cassettes/{folder}/; record it with: "
        f"OPENAI_API_KEY=<your key> pytest '{function}' --consistency-record=once"
    )


def test_a_first_run_says_how_to_record_each_task_and_nothing_else(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=TWO_TASKS)
    result = pytester.runpytest("--consistency-model=fake-model", *previous_outputs(pytester)[:1])
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(skipped=7)
    section = result.stdout.str().split("= consistency =", 1)[1]
    lines = [line for line in section.splitlines() if "not recorded yet" in line]
    assert lines[0] == record_line("test_agent.py::test_task", "test_agent/test_task", "test_agent.py::test_task")
    assert [line.split(":", 3)[2] for line in lines[1:]] == ["test_weather[Oslo]", "test_weather[Lima]"]
    for line in lines[1:]:
        assert " not recorded yet: no cassette under cassettes/test_agent/test_weather" in line
        assert line.endswith("OPENAI_API_KEY=<your key> pytest 'test_agent.py::test_weather' --consistency-record=once")
    for word in ("drift", "mismatch", "Mean@", "nothing scored", "FAILED", "Traceback"):
        assert word not in result.stdout.str(), word
    report = (pytester.path / "report.json").read_text()
    assert "not recorded yet" in report


def test_the_first_run_on_ci_fails_once_per_task_without_drift(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest("--consistency-model=fake-model")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    section = result.stdout.str().split("= consistency =", 1)[1].split("short test summary", 1)[0]
    errors = [line for line in section.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: " + record_line("test_agent.py::test_task", "test_agent/test_task", "test_agent.py::test_task")
    ]
    assert "drift" not in section and "Traceback" not in result.stdout.str()


def test_following_the_advice_records_and_then_replays(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    first = pytester.runpytest(f"--consistency-base-url={fake.base_url}", "--consistency-model=fake-model")
    command = next(line for line in first.stdout.lines if "record it with:" in line).split("record it with: ", 1)[1]
    variable, _, rest = command.partition("=<your key> ")
    assert variable == "OPENAI_API_KEY" and rest.startswith("pytest ")
    args = [arg.strip("'") for arg in rest.split()[1:]]
    recorded = pytester.runpytest(f"--consistency-base-url={fake.base_url}", "--consistency-model=fake-model", *args)
    assert recorded.ret == 0, recorded.stdout.str()
    assert (len(fake.preflights), len(fake.requests)) == (1, 3)  # the preflight (on when recording live), the calls
    assert next(line for line in recorded.stdout.lines if line.startswith("preflight:")).startswith(
        f"preflight: {fake.base_url} model fake-model ok ("
    )
    fake.reset()
    replayed = pytester.runpytest(f"--consistency-base-url={fake.base_url}", "--consistency-model=fake-model")
    assert replayed.ret == 0, replayed.stdout.str()
    replayed.assert_outcomes(passed=3)
    assert fake.requests == []


def test_a_cassette_missing_among_recorded_ones_stays_an_error(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    route = (f"--consistency-base-url={fake.base_url}", "--consistency-model=fake-model")
    assert pytester.runpytest(*route, "--consistency-record=once").ret == 0
    (pytester.path / "cassettes" / "test_agent" / "test_task" / "rep-2.yaml").unlink()
    result = pytester.runpytest(*route)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*replay mismatch in repetition 2*no cassette at cassettes/test_agent/test_task/rep-2.yaml*"]
    )
    assert "not recorded yet" not in result.stdout.str()


# A route no call reaches.


def test_an_unreachable_route_is_one_line_and_the_setups_failure(pytester: pytest.Pytester) -> None:
    args = (f"--consistency-base-url={UNREACHABLE}", "--consistency-model=fake-model", "--consistency-record=off")
    result = pytester.runpytest(*args, "--consistency-gap-max=12")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    for word in ("Traceback", "APIConnectionError", "httpx", "_base_client"):
        assert word not in out, word
    errors = [line for line in result.stdout.lines if line.startswith("error:")]
    assert errors == [
        f"error: cannot reach {UNREACHABLE} (6 connection errors) in 3 repetitions of 1 task; check the base URL "
        "(and the key) or run with --consistency-preflight"
    ]
    assert "0.0 pp <= 12" not in out  # no figure from the route's failure: the gap gate cannot be "ok"
    assert len(result.stdout.lines) < 40, out
    verbose = pytester.runpytest(*args, "-v")
    assert "APIConnectionError" in verbose.stdout.str()  # -v keeps the SDK's traceback


def test_a_route_that_refuses_the_key_is_the_setups_failure(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-wrong-key-000000000000000")
    result = pytester.runpytest(
        f"--consistency-base-url={fake.base_url}", "--consistency-model=fake-model", "--consistency-record=off"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"error: cannot reach {fake.base_url} (3 answered 401) in 3 repetitions of 1 task;*"])
    assert "sk-test-wrong-key" not in result.stdout.str()


# The preflight, by default where the session records live.


def test_the_preflight_runs_by_default_only_where_the_session_records_live(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    route = (f"--consistency-base-url={fake.base_url}", "--consistency-model=fake-model")

    def preflights(*args: str) -> int:
        fake.reset()
        result = pytester.runpytest(*route, *args)
        assert result.ret == 0, result.stdout.str()
        shown = [line for line in result.stdout.lines if line.startswith("preflight:")]
        assert len(fake.preflights) == len(shown), result.stdout.str()
        return len(fake.preflights)

    assert preflights("--consistency-record=off") == 0  # off: the calls may be another tool's replays
    assert preflights("--consistency-record=once") == 1  # nothing recorded yet: live
    assert preflights("--consistency-record=once") == 0  # every cassette there: a replay
    assert preflights("--consistency-record=new_episodes") == 0
    assert preflights("--consistency-record=all") == 1
    assert preflights("--consistency-record=all", "--no-consistency-preflight") == 0
    assert preflights("--consistency-record=all", "-n", "2") == 0  # under xdist: only when asked for
    assert preflights() == 0  # none: replay only


def test_a_route_without_a_model_never_sends_a_null_model(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(pinned_client, pinned_route, consistency):
    pinned_client.chat.completions.create(model=pinned_route.model, messages=[{"role": "user", "content": "hi"}])
"""
    )
    result = pytester.runpytest(f"--consistency-base-url={fake.base_url}", "--consistency-record=off")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert fake.requests == []
    result.stdout.fnmatch_lines(
        ['*no model on the route: POST */chat/completions would send "model": null*Set model: under route:*']
    )
    assert "cannot reach" not in result.stdout.str()


def test_a_corrupt_cassettes_message_comes_without_the_plugins_frames(pytester: pytest.Pytester) -> None:
    folder = pytester.path / "cassettes" / "test_agent" / "test_task"
    folder.mkdir(parents=True)
    for repeat in (1, 2, 3):
        (folder / f"rep-{repeat}.yaml").write_text("interactions: [\n  {bad")
    result = pytester.runpytest("--consistency-model=fake-model")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "pytest_consistency" not in out.split("= consistency =", 1)[0], out  # no frame of the plugin's source
    section = out.split(" ERRORS ", 1)[1].split(" consistency ", 1)[0].splitlines()
    errors = [line for line in section if line.strip("= ")]
    assert len(errors) == 3 * 3, errors  # per repetition: its header, the message naming the file and fix, the -v hint
    assert errors[1].startswith("CassetteError: cassette ") and "is not a valid cassette" in errors[1]
    assert errors[1].endswith("--consistency-record=all")
    assert "pytest_consistency/" in pytester.runpytest("--consistency-model=fake-model", "-v").stdout.str()


def test_outputs_name_a_conftests_hook_relative_to_the_rootdir(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
def pytest_consistency_answers_equivalent(left, right, task_id):
    return str(left).lower() == str(right).lower()
"""
    )
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.repeat_consistency(n=2)
def test_task(consistency):
    consistency.record("Same")
"""
    )
    result = pytester.runpytest("--consistency-report=report.json", "--consistency-html=page.html")
    assert result.ret == 0, result.stdout.str()
    report = (pytester.path / "report.json").read_text()
    assert '"equivalence": "conftest.py"' in report
    for name in ("report.json", "page.html"):
        assert str(pytester.path) not in (pytester.path / name).read_text(), name


def test_a_model_call_to_a_host_no_route_names_is_warned_about_once(
    pytester: pytest.Pytester, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The agent builds its own client from its own setting (as tau-bench with LiteLLM's module-wide defaults): the
    # route names 127.0.0.1:<port>, the agent reaches the same server as localhost:<port>.
    elsewhere = fake.base_url.replace("127.0.0.1", "localhost")
    monkeypatch.setenv("AGENT_BASE_URL", elsewhere)
    pytester.makepyfile(
        test_agent="""
import openai, os, pytest

@pytest.mark.repeat_consistency(n=3)
def test_task(consistency):
    client = openai.OpenAI(base_url=os.environ["AGENT_BASE_URL"])
    client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    client.embeddings.create(model="fake-embedding", input="hi")
"""
    )
    result = pytester.runpytest(f"--consistency-base-url={fake.base_url}", "--consistency-record=off")
    assert result.ret == 0, result.stdout.str()
    host = elsewhere.split("/")[2]
    warned = [line for line in result.stdout.lines if f"a model call went to {host}, which no route" in line]
    assert len(warned) == 1, result.stdout.str()
    assert "litellm.api_base" in result.stdout.str()
    fake.reset()
    monkeypatch.setenv("AGENT_BASE_URL", fake.base_url)  # on the route's host: nothing to say
    quiet = pytester.runpytest(f"--consistency-base-url={fake.base_url}", "--consistency-record=off")
    assert "which no route" not in quiet.stdout.str()
