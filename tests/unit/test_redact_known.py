"""Which secrets a session knows (``known``), and pytest's report text redacted in place (``failure_text``)."""

from __future__ import annotations

import pytest

from pytest_consistency.plugin.failure_text import has_text, redact_report
from pytest_consistency.plugin.secrets import is_secret_value, route_secrets
from pytest_consistency.route.providers import builtin
from pytest_consistency.route.route import Route
from pytest_consistency.secrets.redact import REDACTED, redactor

KEY = "sk-test-unit-key-0123456789abcdef"


def route(provider: str, api_key: str | None, key_env: str) -> Route:
    return Route("http://h/v1", api_key, "m", 60.0, 1, key_env=key_env, provider=provider)


def providers() -> dict[str, object]:
    return {name: builtin(name) for name in ("openai", "anthropic")}


def test_every_routes_key_and_every_variable_a_key_may_come_from() -> None:
    routes = [route("openai", KEY, "OPENAI_API_KEY"), route("anthropic", "gw-token-1", "ANTHROPIC_AUTH_TOKEN")]
    env = {"OPENAI_API_KEY": KEY, "ANTHROPIC_AUTH_TOKEN": "gw-token-1", "ANTHROPIC_API_KEY": " sk-ant-other-2 "}
    found = route_secrets(routes, providers(), env)  # type: ignore[arg-type]
    assert found == sorted({KEY, "gw-token-1", " sk-ant-other-2 ", "sk-ant-other-2"})


def test_replay_placeholders_and_documentation_placeholders_are_not_secrets() -> None:
    from pytest_consistency.cassette.cassettes import REPLAY_KEY

    routes = [route("openai", REPLAY_KEY, "OPENAI_API_KEY")]
    assert route_secrets(routes, providers(), {"OPENAI_API_KEY": "sk-..."}) == []  # type: ignore[arg-type]
    assert not is_secret_value("YOUR_API_KEY") and not is_secret_value("  ") and is_secret_value("sk-1234")


def _failed_report() -> pytest.TestReport:
    try:
        answer = f"gadget {KEY} gw-token-1"
        assert "widget" in answer
    except AssertionError as exc:
        info = pytest.ExceptionInfo.from_exception(exc)
    longrepr = info.getrepr(showlocals=True, style="long")
    return pytest.TestReport(
        "t.py::test",
        ("t.py", 1, "test"),
        {},
        "failed",
        longrepr,
        "call",
        sections=[("Captured stdout call", f"said {KEY}\n")],
        user_properties=[("answer", f"gw-token-1 {KEY}"), ("count", 3)],
    )


def test_a_reports_text_is_redacted_in_place_and_keeps_its_structure() -> None:
    report = _failed_report()
    assert has_text(report) and KEY in report.longreprtext and "gw-token-1" in report.longreprtext
    redact_report(report, redactor(["gw-token-1"]))
    text = report.longreprtext
    assert KEY not in text and "gw-token-1" not in text and REDACTED in text
    crash = getattr(report.longrepr, "reprcrash", None)
    assert crash is not None and KEY not in crash.message and "gw-token-1" not in crash.message
    assert report.sections == [("Captured stdout call", f"said {REDACTED}\n")]
    assert report.user_properties == [("answer", f"{REDACTED} {REDACTED}"), ("count", 3)]


def test_a_skip_reason_tuple_is_redacted() -> None:
    report = pytest.TestReport("t.py::t", ("t.py", 1, "t"), {}, "skipped", ("t.py", 1, f"no {KEY}"), "setup")
    redact_report(report, redactor())
    assert report.longrepr == ("t.py", 1, f"no {REDACTED}")
