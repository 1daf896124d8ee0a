"""Saving one [ui] value keeps the rest of the user's configuration file as it was."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tunaflow_tui.core.settings import load_settings
from tunaflow_tui.core.settings.user_file import UserFileError, save_ui_value, with_ui_value

MINE = """\
# my tunaflow settings
[ui]
mouse = false  # I use the keyboard
theme = "textual-dark"

[workflow]
max_review_rounds = 4
"""


def test_the_theme_line_is_replaced_and_everything_else_kept() -> None:
    updated = with_ui_value(MINE, "theme", "tunaflow-light")
    assert updated == MINE.replace('theme = "textual-dark"', 'theme = "tunaflow-light"')


def test_a_ui_table_without_the_key_gets_it_at_its_end() -> None:
    text = '[ui]\nmouse = false\n\n[workflow]\nmax_review_rounds = 4\n'
    updated = with_ui_value(text, "theme", "paper")
    assert updated == '[ui]\nmouse = false\ntheme = "paper"\n\n[workflow]\nmax_review_rounds = 4\n'


def test_a_file_without_a_ui_table_gets_one_and_an_empty_file_too() -> None:
    assert with_ui_value('[workflow]\nmax_review_rounds = 4\n', "theme", "paper") == (
        '[workflow]\nmax_review_rounds = 4\n\n[ui]\ntheme = "paper"\n')
    assert with_ui_value("", "theme", "paper") == '[ui]\ntheme = "paper"\n'


def test_a_theme_name_with_quotes_is_written_as_a_toml_string() -> None:
    updated = with_ui_value("", "theme", 'odd "name" \\ here')
    assert tomllib.loads(updated)["ui"]["theme"] == 'odd "name" \\ here'


@pytest.mark.parametrize(("text", "reason"), [
    ("[ui\ntheme = 1", "not valid TOML"),
    ('ui = { theme = "x" }\n', "inline or dotted"),
    ('ui.theme = "x"\n', "inline or dotted"),
])
def test_a_file_it_cannot_edit_safely_is_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(UserFileError, match=reason):
        with_ui_value(text, "theme", "paper")


def test_saving_creates_the_file_and_the_settings_read_it_back(config_home: Path, tmp_path: Path) -> None:
    path = save_ui_value("theme", "tunaflow-light")
    assert path == config_home / "config.toml"
    project = tmp_path / "project"
    project.mkdir()
    assert load_settings(project).ui.theme == "tunaflow-light"
    (config_home / "config.toml").write_text(MINE, encoding="utf-8")
    save_ui_value("theme", "paper")
    assert (config_home / "config.toml").read_text(encoding="utf-8") == MINE.replace("textual-dark", "paper")


def test_a_broken_file_is_left_as_it_was(config_home: Path) -> None:
    broken = "[ui\ntheme = 1\n"
    (config_home / "config.toml").write_text(broken, encoding="utf-8")
    with pytest.raises(UserFileError):
        save_ui_value("theme", "paper")
    assert (config_home / "config.toml").read_text(encoding="utf-8") == broken
    assert [p.name for p in config_home.iterdir()] == ["config.toml"], "no temporary file left behind"
