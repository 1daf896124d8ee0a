"""Turn an engine configuration into a running Engine; engine modules are imported only when needed."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from tunaflow_tui.agents.base import Engine
from tunaflow_tui.core.settings.engines import EngineConfig
from tunaflow_tui.core.settings.settings_errors import SettingsError

if TYPE_CHECKING:
    from tunaflow_tui.core.settings.setting_models import Settings

ENGINE_CLASSES: dict[str, tuple[str, str]] = {
    "claude": ("tunaflow_tui.agents.claude", "ClaudeEngine"),
    "codex": ("tunaflow_tui.agents.codex", "CodexEngine"),
    "gemini": ("tunaflow_tui.agents.gemini", "GeminiEngine"),
    "openai-compatible": ("tunaflow_tui.agents.openai_compat", "OpenAICompatEngine"),
    "ollama": ("tunaflow_tui.agents.ollama", "OllamaEngine"),
    "pty": ("tunaflow_tui.agents.pty_engine", "PtyEngine"),
    "acp": ("tunaflow_tui.agents.acp.acp_engine", "AcpEngine"),
    "demo": ("tunaflow_tui.agents.demo", "DemoEngine"),
}
"""Engine type → (module, class); every class takes one ``EngineConfig``."""


def create_engine(config: EngineConfig) -> Engine:
    """Build the engine for ``config`` by its effective type; an unknown type raises SettingsError."""
    engine_type = config.effective_type
    try:
        module_name, class_name = ENGINE_CLASSES[engine_type]
    except KeyError:
        raise SettingsError(
            f"unknown engine type {engine_type!r}; set type to one of: {', '.join(ENGINE_CLASSES)}",
            key=f"engines.{config.name}.type" if config.name else "type",
        ) from None
    if not config.type or not config.name:
        config = config.model_copy(update={"type": engine_type, "name": config.name or engine_type})
    module = importlib.import_module(module_name)
    engine_class = getattr(module, class_name)
    engine = engine_class(config)
    if not isinstance(engine, Engine):
        raise TypeError(f"{module_name}.{class_name} is not an Engine")
    return engine


def engine_for_role(settings: Settings, role: str) -> Engine:
    """The engine that plays ``role`` under ``settings``."""
    return create_engine(settings.engine_for_role(role))
