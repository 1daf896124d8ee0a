"""Where tunaflow's configuration files live; light enough to read before the first frame.

The settings package (validation, defaults) imports pydantic; the app reads its theme and mouse
preference from these files before that, so the paths live here, used by both.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "tunaflow"


def user_config_path() -> Path:
    """``$XDG_CONFIG_HOME/tunaflow/config.toml`` if set, else the platform's user config dir."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg) / APP_NAME / "config.toml"
    import platformdirs  # only where XDG does not say

    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def project_config_path(project_dir: Path) -> Path:
    """The project's own configuration file, ``<project>/.tunaflow/config.toml``."""
    return project_dir / ".tunaflow" / "config.toml"
