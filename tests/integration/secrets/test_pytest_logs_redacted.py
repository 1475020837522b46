"""The route's key in pytest's own logs (issue 41): every handler pytest installs sees redacted text.

The session knows the route's key before any test runs (``OPENAI_API_KEY`` exported). Records that carry it, the
way code logs things (in the format arguments, in the message itself, in an exception's text, in an ``extra``
attribute, in a stack), emitted at every stage of a session (a conftest's ``pytest_configure``, collection, a
fixture, a marked repetition, a plain test), must reach pytest's log file, live logging, ``caplog`` and the captured
log sections of the reports redacted: the key appears in no file the session wrote and nowhere it printed.
"""

from __future__ import annotations

import pytest
from fake_openai import GOOD_KEY

#: A conftest that logs the key in every way, at every stage of the session.
CONFTEST = """
import logging, os, sys

log = logging.getLogger("agent.setup")

def pytest_configure(config):
    log.warning("configured with %s", os.environ["OPENAI_API_KEY"])

def pytest_collection_modifyitems(items):
    log.warning("collected with key " + os.environ["OPENAI_API_KEY"])
"""

TESTS = """
import logging, os, pytest

log = logging.getLogger("agent")
KEY = os.environ["OPENAI_API_KEY"]

def attributes(record):
    \"\"\"What a record carries as text (its extras too); its exception stays the live object the code raised.\"\"\"
    return {name: value for name, value in vars(record).items() if name != "exc_info"}

@pytest.fixture
def configured():
    log.info("fixture sees %r", {"api_key": KEY})
    yield
    log.info("fixture done", extra={"credential": KEY})

@pytest.mark.repeat_consistency(n=2, min_pass=0)
def test_task(configured, consistency, caplog):
    caplog.set_level(logging.DEBUG)
    log.debug("calling with %s", KEY)
    try:
        raise RuntimeError(f"the provider refused key {KEY}")
    except RuntimeError:
        log.exception("call failed")
    log.info("where", stack_info=True)
    with open(f"caplog-{os.getpid()}-{consistency.repeat}.txt", "w") as out:
        out.write(caplog.text + "\\n".join(r.getMessage() for r in caplog.records))
        out.write(repr([attributes(r) for r in caplog.records]))
    consistency.record("ok")

def test_plain(caplog):
    log.error("plain test sees %s", KEY)
    with open(f"caplog-plain-{os.getpid()}.txt", "w") as out:
        out.write(caplog.text + repr([attributes(r) for r in caplog.records]))
    assert False, "fails, so that its captured log is shown"
"""

LOGGING = (
    "--log-file=session.log",
    "--log-file-level=DEBUG",
    "--log-level=DEBUG",
    "-o",
    "log_cli=true",
    "--log-cli-level=DEBUG",
    "-rA",
    "-p",
    "no:cacheprovider",
    "--consistency-record=off",
    "--consistency-report=report.json",
    "--junitxml=junit.xml",
)


def leaks(pytester: pytest.Pytester, result: pytest.RunResult) -> list[str]:
    texts = {"stdout": result.stdout.str(), "stderr": result.stderr.str()}
    for path in sorted(pytester.path.rglob("*")):
        if path.is_file() and path.suffix in (".log", ".txt", ".json", ".xml"):
            texts[path.name] = path.read_text(errors="replace")
    return [name for name, text in texts.items() if GOOD_KEY in text or GOOD_KEY[8:24] in text]


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_routes_key_reaches_no_log_handler_of_pytest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_agent=TESTS)
    result = pytester.runpytest_subprocess(*LOGGING, *workers, timeout=300)
    out = result.stdout.str()
    assert result.ret == 1, out  # test_plain fails on purpose
    log = (pytester.path / "session.log").read_text()
    # Every stage's record arrived (redacted), so that their absence below is not a missing record.
    for seen in ("collected with key", "fixture sees", "calling with", "call failed", "RuntimeError", "where"):
        assert seen in log, (seen, log)
    assert "Captured log call" in out and "plain test sees" in out, out
    assert len(list(pytester.path.glob("caplog-*.txt"))) == 3
    assert leaks(pytester, result) == []
    assert "<redacted>" in log


def test_a_record_of_configure_time_is_redacted(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first record of a session, from a conftest's ``pytest_configure``, before any test or collection."""
    monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_agent="def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess(
        "--log-file=session.log", "--log-file-level=DEBUG", "-o", "log_cli=true", "-p", "no:cacheprovider"
    )
    assert result.ret == 0, result.stdout.str()
    everything = result.stdout.str() + result.stderr.str() + (pytester.path / "session.log").read_text()
    assert "configured with" in everything, everything
    assert GOOD_KEY not in everything and GOOD_KEY[8:24] not in everything, everything
