"""Built-in and user themes: TOML files turned into Textual `Theme`s and registered on the app."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.color import ColorSystem
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
    from importlib import resources

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
    import tomllib  # here, not at the top: the colours are adapted before the first frame, files read later

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


def read_all(extra_dirs: Iterable[Path] | None = None) -> tuple[list[Theme], list[str]]:
    """The built-in and user themes and the warnings about skipped files (reads files: any thread).

    `extra_dirs` replaces the user theme directory (tests and `--theme-dir` style options).
    """
    user_dirs = [user_theme_dir()] if extra_dirs is None else list(extra_dirs)
    return load_themes([builtin_theme_dir(), *user_dirs])


def register_all(app: App[Any], extra_dirs: Iterable[Path] | None = None,
                 read: tuple[list[Theme], list[str]] | None = None) -> list[str]:
    """Register built-in and user themes on `app`; returns warnings for files that were skipped.

    `read` is what :func:`read_all` returned (in another thread, say); without it the files are read now.
    """
    themes, warnings = read if read is not None else read_all(extra_dirs)
    for theme in themes:
        app.register_theme(theme)
    return warnings


_FEW_COLOURS = {"standard": ColorSystem.STANDARD, "windows": ColorSystem.WINDOWS}
"""Terminals that show 16 colours (or 8 and their bright variants): every theme colour becomes one of them."""

_ATTENTION_YELLOWS = {True: ("#ffd75f", "#ffff00", "#d7af00"), False: ("#875f00", "#808000", "#af8700")}
"""Yellows that stay yellow in 16 colours, for dark and for light themes, most readable first."""


def _in_few_colours(color: Color, system: ColorSystem) -> int | None:
    return color.rich_color.downgrade(system).number


def for_color_system(theme: Theme, color_system: str | None) -> Theme:
    """``theme`` as a terminal with ``color_system`` should show it: attention is never the error colour.

    Under 16 colours many themes' warning colour (what waits for the user: pending cards, the decision
    strip, questions) and accent (the focus) turn into the same red as their error colour — Textual's
    own default theme among them.  Those two then take a yellow that stays yellow.  Other colour
    systems get ``theme`` unchanged.
    """
    system = _FEW_COLOURS.get(color_system or "")
    if system is None:
        return theme
    colours = theme.to_color_system()
    if colours.error is None:
        return theme
    error = _in_few_colours(colours.error, system)
    yellow = next((candidate for candidate in _ATTENTION_YELLOWS[theme.dark]
                   if _in_few_colours(Color.parse(candidate), system) != error), None)
    if yellow is None:
        return theme
    red = {field for field in ("warning", "accent")
           if _in_few_colours(getattr(colours, field), system) == error}
    if not red:
        return theme
    return dataclasses.replace(theme, warning=yellow if "warning" in red else theme.warning,
                               accent=yellow if "accent" in red else theme.accent)


def pick_theme(app: App[Any], project: Path | None) -> None:
    """Let the user pick a theme (built-in or from the themes folder); the choice is saved for next time."""
    from tunaflow_tui.screens.pickers import PickerScreen

    names = sorted(app.available_themes)
    first = [n for n in (BUILTIN_DARK, BUILTIN_LIGHT) if n in names]
    ordered = first + [n for n in names if n not in first]

    def chosen(name: str | None) -> None:
        if name:
            app.theme = name
            remember_theme(app, name, project)

    app.push_screen(PickerScreen("Change theme", "Themes from the themes folder are listed too. "
                                 "Your choice is saved for next time.",
                                 [(n, n) for n in ordered], app.theme), chosen)


def remember_theme(app: App[Any], name: str, project: Path | None) -> None:
    """Save ``name`` as ``[ui] theme`` in the user's configuration file, and say where (or why not)."""
    from tunaflow_tui.core.config_paths import user_config_path
    from tunaflow_tui.core.settings.user_file import UserFileError, save_ui_value, ui_value_overridden

    try:
        path = save_ui_value("theme", name)
    except (OSError, UserFileError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        app.notify(f"The theme {name} is on until you quit, but it could not be saved in "
                   f"{user_config_path()}: {reason}", severity="warning", timeout=10)
        return
    overridden = ui_value_overridden("theme", project)
    if overridden:
        app.notify(f"The theme {name} is saved in {path}, but {overridden} sets a theme too, and that "
                   "one wins when tunaflow starts.", severity="warning", timeout=10)
    else:
        app.notify(f"The theme {name} is saved in {path}; tunaflow starts with it from now on.")
