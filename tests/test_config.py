"""The one configuration module: defaults, file, environment, validation, ceilings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx import config


def test_defaults_file_and_env_resolve_in_order(isolated_home: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    assert config.Config.load().get_int("prompt_records") == 3
    config.set_value("prompt_records", "2")
    assert config.Config.load().get_int("prompt_records") == 2
    assert config.Config.load().source("prompt_records") == "file"
    monkeypatch.setenv("AGENTCTX_PROMPT_RECORDS", "1")
    assert config.Config.load().get_int("prompt_records") == 1
    assert config.Config.load().source("prompt_records") == "env"


def test_every_knob_has_an_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    for knob in config.KNOBS.values():
        raw = {"bool": "off", "choice": knob.choices[-1] if knob.choices else "x",
               "str": "value", "time": "2026-03-01"}.get(
                   knob.kind, str(knob.minimum if knob.minimum is not None else 1))
        monkeypatch.setenv(f"AGENTCTX_{knob.key.upper()}", raw)
        assert config.Config.load().source(knob.key) == "env"
        config.Config.load().get(knob.key)  # parses without error


def test_switches_take_on_and_off(isolated_home: Path) -> None:
    config.set_value("llm", "off")
    assert config.Config.load().get_bool("llm") is False
    config.set_value("llm", "on")
    assert config.Config.load().get_bool("llm") is True


@pytest.mark.parametrize(("key", "value", "message"), [
    ("session_start_tokens", "1501", "at most 1500"),
    ("prompt_tokens", "5000", "at most 2000"),
    ("prompt_records", "4", "at most 3"),
    ("injection_chars", "9000", "at most 8000"),
    ("prompt_records", "three", "takes a int"),
    ("search", "vector", "one of fts, like, pinned"),
    ("llm", "maybe", "on/off"),
    ("no_such_knob", "1", "unknown config key"),
])
def test_bad_values_are_refused_and_change_nothing(isolated_home: Path, key: str, value: str,
                                                   message: str) -> None:
    config.set_value("prompt_tokens", "1000")
    before = config.config_path().read_bytes()
    with pytest.raises(config.ConfigError, match=message):
        config.set_value(key, value)
    assert config.config_path().read_bytes() == before


def test_a_malformed_file_is_refused_not_overwritten(isolated_home: Path) -> None:
    config.ensure_home()
    config.config_path().write_text("{not json", encoding="utf-8")
    with pytest.raises(config.ConfigError, match="not valid JSON"):
        config.set_value("llm", "off")
    assert config.config_path().read_text(encoding="utf-8") == "{not json"


def test_unset_returns_to_default(isolated_home: Path) -> None:
    config.set_value("recent_prompts", "5")
    assert config.unset_value("recent_prompts") is True
    assert config.unset_value("recent_prompts") is False
    assert json.loads(config.config_path().read_text(encoding="utf-8")) == {}
    assert config.Config.load().get_int("recent_prompts") == 20


def test_home_is_private(isolated_home: Path) -> None:
    root = config.ensure_home()
    assert root == isolated_home
    assert (root.stat().st_mode & 0o777) == 0o700
    assert (root / "logs").is_dir() and (root / "models").is_dir()
