"""Themes: built-in ones register and apply, user files load, broken files are skipped with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Label

from tunaflow_tui.themes import (
    BUILTIN_DARK,
    BUILTIN_LIGHT,
    COLOR_FIELDS,
    builtin_theme_dir,
    load_themes,
    register_all,
)

REPO_THEMES = Path(__file__).resolve().parents[3] / "themes"
GOOD = 'name = "mine"\nprimary = "#ff8700"\nbackground = "#000000"\ndark = true\n'


def xterm_256_rgb() -> set[tuple[int, int, int]]:
    steps = (0, 95, 135, 175, 215, 255)
    cube = {(r, g, b) for r in steps for g in steps for b in steps}
    greys = {(8 + 10 * i,) * 3 for i in range(24)}
    return cube | greys


def test_builtin_themes_load_and_use_only_256_colour_palette_entries() -> None:
    themes, warnings = load_themes([builtin_theme_dir()])
    assert warnings == []
    by_name = {t.name: t for t in themes}
    assert {BUILTIN_DARK, BUILTIN_LIGHT} <= set(by_name)
    assert by_name[BUILTIN_DARK].dark and not by_name[BUILTIN_LIGHT].dark
    palette = xterm_256_rgb()
    for theme in by_name.values():
        for field in COLOR_FIELDS:
            value = getattr(theme, field)
            assert value is not None, f"{theme.name} lacks {field}"
            rgb = tuple(int(value[i : i + 2], 16) for i in (1, 3, 5))
            assert rgb in palette, f"{theme.name}.{field} {value} degrades at 256 colours"


def test_example_themes_in_the_repo_load() -> None:
    themes, warnings = load_themes([REPO_THEMES])
    assert warnings == []
    assert {t.name for t in themes} >= {"ocean", "paper"}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("name = \"broken\nprimary = 1", "not valid TOML"),
        ('primary = "#ff0000"\n', "'name' is missing"),
        ('name = "x"\n', "'primary' is missing"),
        ('name = "x"\nprimary = "not-a-colour"\n', "'primary' is not a colour"),
        ('name = "x"\nprimary = "#ff0000"\nprimery = "#00ff00"\n', "unknown field: primery"),
        ('name = "x"\nprimary = "#ff0000"\ndark = "yes"\n', "'dark' must be true or false"),
    ],
)
def test_malformed_file_is_skipped_with_a_clear_message(tmp_path: Path, content: str, reason: str) -> None:
    (tmp_path / "good.toml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.toml").write_text(content, encoding="utf-8")
    themes, warnings = load_themes([tmp_path])
    assert [t.name for t in themes] == ["mine"]
    assert len(warnings) == 1
    assert "bad.toml" in warnings[0] and reason in warnings[0]


def test_missing_directory_and_binary_file_do_not_crash(tmp_path: Path) -> None:
    (tmp_path / "junk.toml").write_bytes(b"\xff\xfe\x00garbage")
    themes, warnings = load_themes([tmp_path / "nope", tmp_path])
    assert themes == []
    assert "not UTF-8" in warnings[0]


class ThemedApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Label("hello")


async def test_register_all_makes_builtin_and_user_themes_selectable(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.toml").write_text("nonsense = = =", encoding="utf-8")
    app = ThemedApp()
    warnings = register_all(app, extra_dirs=[tmp_path])
    assert len(warnings) == 1 and "bad.toml" in warnings[0]
    async with app.run_test(size=(40, 5)) as pilot:
        for name in (BUILTIN_DARK, BUILTIN_LIGHT, "mine"):
            app.theme = name
            await pilot.pause()
            assert app.current_theme.name == name
        assert app.screen.styles.background.hex.lower() == "#000000"


async def test_user_theme_overrides_a_builtin_of_the_same_name(tmp_path: Path) -> None:
    (tmp_path / "dark.toml").write_text(f'name = "{BUILTIN_DARK}"\nprimary = "#ff0000"\n', encoding="utf-8")
    app = ThemedApp()
    assert register_all(app, extra_dirs=[tmp_path]) == []
    assert app.get_theme(BUILTIN_DARK) is not None
    assert app.get_theme(BUILTIN_DARK).primary == "#ff0000"  # type: ignore[union-attr]
