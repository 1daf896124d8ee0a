"""Timeouts and output caps must be usable numbers: nan, inf, zero or negative is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from tunaflow_tui.core.settings import SettingsError, load_settings

BAD_SECONDS = ["nan", "inf", "-inf", "-5", "0", "0.0"]


@pytest.mark.parametrize("key", ["timeout_idle_s", "timeout_total_s", "idle_end_s"])
@pytest.mark.parametrize("value", BAD_SECONDS)
def test_an_engine_timeout_that_is_not_a_positive_finite_number_is_refused(
        config_home: Path, key: str, value: str) -> None:
    (config_home / "config.toml").write_text(f"[engines.claude]\n{key} = {value}\n", encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        load_settings()
    message = str(info.value)
    assert f"engines.claude.{key}" in message and str(config_home / "config.toml") in message
    assert "finite" in message or "greater than 0" in message


@pytest.mark.parametrize("value", ["0", "-1", "-20000000"])
def test_an_output_cap_of_zero_or_less_is_refused(config_home: Path, value: str) -> None:
    (config_home / "config.toml").write_text(f"[engines.codex]\nmax_output_bytes = {value}\n", encoding="utf-8")
    with pytest.raises(SettingsError, match=r"engines\.codex\.max_output_bytes: .*greater than 0"):
        load_settings()


@pytest.mark.parametrize("value", BAD_SECONDS)
def test_the_test_timeout_is_validated_too(config_home: Path, value: str) -> None:
    (config_home / "config.toml").write_text(f"[workflow]\ntest_timeout_s = {value}\n", encoding="utf-8")
    with pytest.raises(SettingsError, match=r"workflow\.test_timeout_s"):
        load_settings()


def test_an_environment_variable_is_validated_and_named(config_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUNAFLOW_ENGINES__DEMO__TIMEOUT_IDLE_S", "nan")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert "TUNAFLOW_ENGINES__DEMO__TIMEOUT_IDLE_S" in str(info.value)
    assert "engines.demo.timeout_idle_s" in str(info.value)


def test_sensible_values_still_load(config_home: Path) -> None:
    (config_home / "config.toml").write_text(
        "[engines.claude]\ntimeout_idle_s = 0.5\ntimeout_total_s = 7200\nmax_output_bytes = 1\nidle_end_s = 2\n"
        "[workflow]\ntest_timeout_s = 30\n", encoding="utf-8")
    claude = load_settings().engines["claude"]
    assert (claude.timeout_idle_s, claude.timeout_total_s, claude.max_output_bytes) == (0.5, 7200, 1)


@pytest.mark.parametrize(("table", "key", "value"), [
    ("engines.claude", "timeout_idle_s", "true"), ("engines.claude", "max_output_bytes", "true"),
    ("workflow", "test_timeout_s", "false"), ("context", "max_tokens", "true"), ("memory", "link_max", "true"),
    ("workflow", "auto_review", "1"), ("ui", "bell", "0"),
])
def test_a_switch_is_no_number_and_a_number_no_switch(config_home: Path, table: str, key: str, value: str) -> None:
    (config_home / "config.toml").write_text(f"[{table}]\n{key} = {value}\n", encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        load_settings()
    message = str(info.value)
    assert f"{table}.{key}: " in message and str(config_home / "config.toml") in message
    assert ("a number is expected here" in message) != ("true or false is expected here" in message), message


def test_switches_and_numbers_from_the_environment_are_still_read(
        config_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUNAFLOW_ENGINES__DEMO__TIMEOUT_IDLE_S", "30")
    monkeypatch.setenv("TUNAFLOW_WORKFLOW__AUTO_REVIEW", "false")
    settings = load_settings()
    assert settings.engines["demo"].timeout_idle_s == 30 and settings.workflow.auto_review is False


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "\"many\""])
def test_max_parallel_plans_must_be_a_whole_number_of_at_least_one(config_home: Path, value: str) -> None:
    (config_home / "config.toml").write_text(f"[workflow]\nmax_parallel_plans = {value}\n", encoding="utf-8")
    with pytest.raises(SettingsError, match=r"workflow\.max_parallel_plans"):
        load_settings()


def test_max_parallel_plans_defaults_to_three_and_takes_the_configured_cap(config_home: Path) -> None:
    assert load_settings().workflow.max_parallel_plans == 3
    (config_home / "config.toml").write_text("[workflow]\nmax_parallel_plans = 1\n", encoding="utf-8")
    assert load_settings().workflow.max_parallel_plans == 1
