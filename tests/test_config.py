"""The one configuration module: defaults, file, environment, validation, ceilings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx.core import config


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


def test_an_unusable_value_takes_the_default_never_a_clamped_one(
        isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config.ensure_home()
    config.config_path().write_text(json.dumps({
        "hook_busy_timeout_ms": -5, "prompt_tokens": 999999, "prompt_records": "three",
        "llm": "maybe", "prompt_token": 5, "recent_prompts": 7}), encoding="utf-8")
    monkeypatch.setenv("AGENTCTX_SUBAGENT_TOKENS", "9")
    cfg = config.Config.load()
    assert cfg.get_int("hook_busy_timeout_ms") == 1500  # the default, not the minimum 0
    assert cfg.get_int("prompt_tokens") == 2000
    assert cfg.get_int("prompt_records") == 3 and cfg.get_bool("llm") is True
    assert cfg.get_int("subagent_tokens") == 500  # the default, not the minimum 50
    assert cfg.get_int("recent_prompts") == 7  # a good value beside bad ones still counts
    problems = cfg.problems()
    assert set(problems) == {"hook_busy_timeout_ms", "prompt_tokens", "prompt_records", "llm",
                             "subagent_tokens"}
    assert "at least 0" in problems["hook_busy_timeout_ms"]
    assert problems["subagent_tokens"].startswith("AGENTCTX_SUBAGENT_TOKENS: ")
    assert cfg.invalid("recent_prompts") is None
    assert cfg.unknown_keys() == ["prompt_token"]
    with pytest.raises(config.ConfigError, match="unknown config key"):
        cfg.get("no_such_knob")


def test_config_list_and_doctor_show_what_is_not_used(isolated_home: Path) -> None:
    from tests.conftest import run_cli

    config.ensure_home()
    config.config_path().write_text('{"prompt_tokens": 999999, "prompt_token": 5}',
                                    encoding="utf-8")
    listed = run_cli("config", "list")
    assert listed.returncode == 0, listed.stderr
    line = next(row for row in listed.stdout.splitlines() if row.startswith("prompt_tokens "))
    assert "2000" in line and "invalid: using default" in line
    rows = {row["key"]: row for row in json.loads(run_cli("config", "list", "--json").stdout)}
    assert rows["prompt_tokens"]["value"] == 2000
    assert "at most 2000" in rows["prompt_tokens"]["invalid"]
    assert rows["llm"]["invalid"] is None
    got = run_cli("config", "get", "prompt_tokens")
    assert got.stdout.strip() == "2000" and "invalid: using default" in got.stderr
    report = json.loads(run_cli("doctor", "--json", "--quick").stdout)
    [check] = [c for c in report["checks"] if c["name"] == "config"]
    assert check["status"] == "warn"
    assert "prompt_tokens" in check["detail"] and "prompt_token " in check["detail"] + " "
    assert "agentctx config" in check["fix"]


@pytest.mark.timeout(60)
def test_a_config_file_that_is_not_a_regular_file_is_an_error_not_a_hang(
        isolated_home: Path) -> None:
    from tests.support import special_files

    config.ensure_home()
    special_files.fifo(config.config_path())
    with pytest.raises(config.ConfigError, match="not a regular file"):
        config.Config.load()
