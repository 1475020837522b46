"""Rewriting the cassettes of a session without the secrets it learned late (cassette.rescrub): each file in its own
format, only for what it was not scanned for, removed when it cannot be made clean; one list per session of a
process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_text import cassette_strings

LATE = "gw-late-token-5e5e6f6f"


def _cassette(fmt: str, token: str = LATE) -> str:
    """A cassette as the persister writes it (vcrpy's writers), holding ``token`` where only later text revealed it:
    in a long prompt (YAML folds it over lines), a query parameter, a response header and body."""
    from vcr.serializers import jsonserializer, yamlserializer

    prompt = "please remember this for later " * 4 + token + " and keep going " * 4
    body = json.dumps({"id": "chatcmpl-1", "choices": [{"message": {"content": f"noted {token}"}}]})
    data = {
        "interactions": [
            {
                "request": {
                    "body": json.dumps({"model": "m", "messages": [{"role": "user", "content": prompt}]}),
                    "headers": {"x-consistency-body-digest": ["sha256:00ff"], "user-agent": ["OpenAI/Python"]},
                    "method": "POST",
                    "uri": f"http://127.0.0.1:9/v1/chat/completions?trace={token}",
                },
                "response": {
                    "body": {"string": body},
                    "headers": {"content-length": [str(len(body))], "x-echo": [token], "content-type": ["json"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ],
        "version": 1,
    }
    return (jsonserializer if fmt == "json" else yamlserializer).serialize(data)


def _body(token: str) -> str:
    return json.dumps({"id": "chatcmpl-1", "choices": [{"message": {"content": f"noted {token}"}}]})


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_a_cassette_is_rewritten_in_its_own_format_without_the_late_secret(tmp_path: Path, fmt: str) -> None:
    from vcr.persisters.filesystem import FilesystemPersister
    from vcr.serializers import jsonserializer, yamlserializer

    from pytest_consistency.cassette import rescrub as late_secrets

    path = tmp_path / f"rep-1.{fmt}"
    path.write_text(_cassette(fmt))
    path.chmod(0o640)
    assert late_secrets.rescrub(path, [LATE])
    text = path.read_text()
    assert text == _cassette(fmt, "<redacted>")  # what vcrpy writes, byte for byte: the secret aside
    assert LATE not in text and LATE not in cassette_strings(path)
    assert path.stat().st_mode & 0o777 == 0o640
    serializer = jsonserializer if fmt == "json" else yamlserializer
    requests, responses = FilesystemPersister.load_cassette(path, serializer)  # vcrpy reads it as before
    assert requests[0].uri.endswith("?trace=<redacted>")
    assert responses[0]["body"]["string"] == _body("<redacted>").encode()
    assert responses[0]["headers"]["content-length"] == [str(len(_body("<redacted>")))]  # the body's new length
    assert responses[0]["headers"]["x-echo"] == ["<redacted>"]
    assert requests[0].headers["x-consistency-body-digest"] == "sha256:00ff"  # replays match what was sent
    assert not late_secrets.rescrub(path, [LATE])  # nothing left: not written again


def test_a_cassette_without_the_late_secret_is_left_as_it_is(tmp_path: Path) -> None:
    from pytest_consistency.cassette import rescrub as late_secrets

    path = tmp_path / "rep-1.yaml"
    path.write_text(_cassette("yaml", "nothing-secret-here"))
    before = path.stat().st_mtime_ns
    assert not late_secrets.rescrub(path, [LATE])
    assert path.stat().st_mtime_ns == before


def test_only_the_secrets_a_file_was_not_scanned_for_are_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_consistency.cassette import rescrub as late_secrets

    path = tmp_path / "rep-1.yaml"
    path.write_text(_cassette("yaml"))
    asked: list[list[str]] = []
    monkeypatch.setattr(late_secrets, "rescrub", lambda p, secrets: asked.append(secrets) or False)
    files = {str(path): frozenset({"route-key-1", LATE}), str(tmp_path / "rep-2.yaml"): frozenset({"route-key-1"})}
    assert late_secrets.rescrub_cassettes(files, {"route-key-1", LATE}) == {}
    assert asked == [[LATE]]  # rep-1 was scanned for it already: not even read


def test_a_cassette_that_cannot_be_made_clean_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_consistency.cassette import rescrub as late_secrets

    path = tmp_path / "rep-1.yaml"
    path.write_text(_cassette("yaml"))
    monkeypatch.setattr(late_secrets, "_redact_interaction", lambda interaction, redact: None)  # a binary body
    problems = late_secrets.rescrub_cassettes({str(path): frozenset()}, [LATE])
    assert list(problems) == [str(path)] and "removed" in problems[str(path)]
    assert not path.exists()
    assert not list(tmp_path.iterdir())  # no temporary file left either


def test_a_cassette_that_cannot_be_read_back_is_removed_without_quoting_it(tmp_path: Path) -> None:
    from pytest_consistency.cassette import rescrub as late_secrets

    path = tmp_path / "rep-1.yaml"
    path.write_text(f"interactions: [{{{LATE}\n")  # changed behind the session's back: no longer YAML
    problems = late_secrets.rescrub_cassettes({str(path): frozenset()}, [LATE])
    assert not path.exists()
    assert "could not be rewritten" in problems[str(path)] and LATE not in problems[str(path)]


def test_the_sessions_of_a_process_keep_their_own_lists() -> None:
    """pytester runs a session inside another's test: each session's writes are its own."""
    from pytest_consistency.cassette import rescrub as late_secrets

    outer = late_secrets.open_session()
    inner = late_secrets.open_session()
    late_secrets.note_written("/tmp/a/rep-1.yaml", {"s1"})
    late_secrets.close_session(inner)
    late_secrets.note_written("/tmp/a/rep-2.yaml", {"s2"})
    late_secrets.close_session(outer)
    late_secrets.note_written("/tmp/a/rep-3.yaml", {"s3"})  # no session: nowhere
    assert inner.files == {"/tmp/a/rep-1.yaml": frozenset({"s1"})}
    assert outer.files == {"/tmp/a/rep-2.yaml": frozenset({"s2"})}
    merged = late_secrets.Written()
    merged.merge(json.loads(json.dumps(inner.output())))  # as workeroutput carries it
    assert merged.files == inner.files


def test_late_secrets_are_those_missing_from_a_processs_first_list() -> None:
    from pytest_consistency.cassette.rescrub import late

    assert late({"a", "b", "c"}, [frozenset({"a", "b", "c"})]) == []
    assert late({"a", "b", "c"}, [frozenset({"a", "b", "c"}), frozenset({"a"})]) == ["b", "c"]
    assert late({"a"}, []) == []  # no text was ever redacted: none can hold a secret
