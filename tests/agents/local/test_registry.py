"""The registry builds the right engine for each configured type and role."""

from __future__ import annotations

from pathlib import Path

import pytest

from tunaflow_tui.agents.demo import DemoEngine
from tunaflow_tui.agents.ollama import OllamaEngine
from tunaflow_tui.agents.openai_compat import OpenAICompatEngine
from tunaflow_tui.agents.registry import create_engine, engine_for_role
from tunaflow_tui.core.settings import EngineConfig, SettingsError, load_settings


@pytest.mark.parametrize(
    ("config", "cls"),
    [(EngineConfig(name="demo"), DemoEngine),
     (EngineConfig(name="lm", type="openai-compatible", base_url="http://127.0.0.1:1/v1"), OpenAICompatEngine),
     (EngineConfig(name="ollama"), OllamaEngine)],
)
def test_create_engine_dispatches_on_the_effective_type(config: EngineConfig, cls: type) -> None:
    engine = create_engine(config)
    assert isinstance(engine, cls)
    assert engine.name == config.name


def test_pty_type_builds_the_pty_engine() -> None:
    engine = create_engine(EngineConfig(name="repl", type="pty", command="python3"))
    assert engine.type == "pty" and engine.name == "repl"


def test_unknown_type_is_a_clear_settings_error() -> None:
    with pytest.raises(SettingsError, match=r"engines\.weird\.type: unknown engine type 'gpt'"):
        create_engine(EngineConfig(name="weird", type="gpt"))


def test_engine_for_role_uses_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("PATH", str(tmp_path))
    project = tmp_path / "p"
    (project / ".tunaflow").mkdir(parents=True)
    (project / ".tunaflow" / "config.toml").write_text(
        '[roles]\nreviewer = "local"\n[engines.local]\ntype = "ollama"\nmodel = "qwen"\n', encoding="utf-8")
    settings = load_settings(project)
    reviewer = engine_for_role(settings, "reviewer")
    assert isinstance(reviewer, OllamaEngine) and reviewer.name == "local"
    assert isinstance(engine_for_role(settings, "developer"), DemoEngine)
