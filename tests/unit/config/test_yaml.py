"""The YAML configuration file: nested sections at any depth, and refusals that name the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_consistency.config.yaml import ConfigError, load_yaml


def test_both_routes_load_from_their_sections(tmp_path: Path) -> None:
    path = tmp_path / "consistency.yaml"
    path.write_text(
        "route:\n  base_url: http://gw:4000/v1\n  concurrency: 2\n"
        "routes:\n  same_gateway: true\n  anthropic:\n    base_url: http://gw:4000\n    model: claude-x\n"
    )
    flat, lines = load_yaml(path)
    assert flat == {
        ("route", "base_url"): "http://gw:4000/v1",
        ("route", "concurrency"): 2,
        ("routes", "same_gateway"): True,
        ("routes", "anthropic", "base_url"): "http://gw:4000",
        ("routes", "anthropic", "model"): "claude-x",
    }
    assert lines[("routes", "anthropic", "model")] == 8


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("routes:\n  anthropic:\n    base_ur1: x\n", ":3: unknown setting 'routes.anthropic.base_ur1'"),
        ("routes:\n  anthropic: http://gw\n", ":2: 'routes.anthropic' must be a mapping"),
        ("routes:\n  openai:\n    base_url: x\n", ":2: unknown setting 'routes.openai'"),
    ],
)
def test_a_wrong_nested_key_is_refused_with_its_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "consistency.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_yaml(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "gates:\n  consistency_gap_mx: 3\n",
            "unknown setting 'gates.consistency_gap_mx'; did you mean 'gates.consistency_gap_max'?",
        ),
        ("repat: 5\n", "unknown setting 'repat'; did you mean 'repeat'?"),
        ("route:\n  colour: red\n", "unknown setting 'route.colour'; the settings in 'route' are "),
        ("colour: red\n", "unknown setting 'colour'; the settings at the top level are "),
    ],
)
def test_an_unknown_key_gets_the_setting_meant_not_every_setting(tmp_path: Path, text: str, message: str) -> None:
    """A misspelt key names the setting meant; a key far from any names the settings at its level. It listed all 52
    settings, in which the one meant had to be found by eye."""
    path = tmp_path / "consistency.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_yaml(path)
    assert message in str(raised.value)
    assert len(str(raised.value)) < 400, str(raised.value)
    assert ("base_url" in str(raised.value)) == text.startswith("route:")  # the settings of its level, only
