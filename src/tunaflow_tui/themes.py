"""Built-in and user themes: TOML files turned into Textual `Theme`s and registered on the app."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

from tunaflow_tui.core.counting import plural

COLOR_FIELDS = (
    "primary", "secondary", "accent", "background", "surface", "panel",
    "foreground", "warning", "error", "success",
)
KNOWN_FIELDS = frozenset((*COLOR_FIELDS, "name", "dark"))
MAX_THEME_FILE_BYTES = 64 * 1024

BUILTIN_DARK = "tunaflow-dark"
BUILTIN_LIGHT = "tunaflow-light"


class ThemeFileError(ValueError):
    """A theme file that cannot be used; the message says why."""


def user_theme_dir() -> Path:
    """Where users put their own theme files (not created here)."""
    from platformdirs import user_config_dir

    return Path(user_config_dir("tunaflow")) / "themes"


def builtin_theme_dir() -> Path:
    """The packaged theme files."""
    return Path(str(resources.files("tunaflow_tui") / "data" / "themes"))


def theme_from_mapping(data: dict[str, Any]) -> Theme:
    """Build a Theme from parsed TOML; raises ThemeFileError naming the offending field."""
    unknown = sorted(set(data) - KNOWN_FIELDS)
    if unknown:
        raise ThemeFileError(f"unknown {plural(len(unknown), 'field')}: {', '.join(unknown)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError("'name' is missing or empty")
    if "primary" not in data:
        raise ThemeFileError("'primary' is missing")
    colors: dict[str, str] = {}
    for field in COLOR_FIELDS:
        if field not in data:
            continue
        value = data[field]
        if not isinstance(value, str):
            raise ThemeFileError(f"'{field}' must be a colour string")
        try:
            Color.parse(value)
        except ColorParseError:
            raise ThemeFileError(f"'{field}' is not a colour: {value!r}") from None
        colors[field] = value
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError("'dark' must be true or false")
    return Theme(
        name=name.strip(), dark=dark, primary=colors["primary"], secondary=colors.get("secondary"),
        accent=colors.get("accent"), background=colors.get("background"), surface=colors.get("surface"),
        panel=colors.get("panel"), foreground=colors.get("foreground"), warning=colors.get("warning"),
        error=colors.get("error"), success=colors.get("success"),
    )


def load_theme_file(path: Path) -> Theme:
    """Read one theme file; raises ThemeFileError with a readable reason."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ThemeFileError(f"cannot read: {error.strerror or error}") from None
    if len(raw) > MAX_THEME_FILE_BYTES:
        raise ThemeFileError("file is too large for a theme")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ThemeFileError("not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ThemeFileError(f"not valid TOML: {error}") from None
    return theme_from_mapping(data)


def load_themes(dirs: Iterable[Path]) -> tuple[list[Theme], list[str]]:
    """Load every `*.toml` theme in `dirs` (missing dirs are fine).

    Returns the themes and one warning per skipped file. A later file with the same
    theme name replaces an earlier one, so user themes override built-in ones.
    """
    themes: dict[str, Theme] = {}
    warnings: list[str] = []
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                theme = load_theme_file(path)
            except ThemeFileError as error:
                warnings.append(f"Theme file {path} skipped: {error}")
                continue
            themes[theme.name] = theme
    return list(themes.values()), warnings


def register_all(app: App[Any], extra_dirs: Iterable[Path] | None = None) -> list[str]:
    """Register built-in and user themes on `app`; returns warnings for files that were skipped.

    `extra_dirs` replaces the user theme directory (tests and `--theme-dir` style options).
    """
    user_dirs = [user_theme_dir()] if extra_dirs is None else list(extra_dirs)
    themes, warnings = load_themes([builtin_theme_dir(), *user_dirs])
    for theme in themes:
        app.register_theme(theme)
    return warnings
