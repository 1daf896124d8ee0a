"""Configuration: user and project TOML files, env overrides ``TUNAFLOW_*``."""

from tunaflow_tui.core.config_paths import project_config_path, user_config_path
from tunaflow_tui.core.settings.engines import EngineConfig
from tunaflow_tui.core.settings.loader import (
    default_roles,
    installed_vendor_clis,
    load_settings,
)
from tunaflow_tui.core.settings.setting_models import (
    ENGINE_TYPES,
    ROLE_NAMES,
    ContextConfig,
    MemoryConfig,
    RolesConfig,
    Settings,
    UiConfig,
    WorkflowConfig,
)
from tunaflow_tui.core.settings.settings_errors import SettingsError

__all__ = [
    "ENGINE_TYPES",
    "ROLE_NAMES",
    "ContextConfig",
    "EngineConfig",
    "MemoryConfig",
    "RolesConfig",
    "Settings",
    "SettingsError",
    "UiConfig",
    "WorkflowConfig",
    "default_roles",
    "installed_vendor_clis",
    "load_settings",
    "project_config_path",
    "user_config_path",
]
