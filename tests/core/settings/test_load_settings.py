"""Loading configuration: precedence, defaults from installed CLIs, and errors that say where."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tunaflow_tui.core.settings import ROLE_NAMES, SettingsError, load_settings

PRODUCT_EXAMPLE = """
[roles]
architect = "claude"
developer = "claude-sonnet"
reviewer = "codex"
verifier = "gemini"
synthesizer = "claude"
summarizer = "claude"
[engines.claude]
command = "claude"
model = ""
extra_args = []
timeout_idle_s = 600
[engines.claude-sonnet]
type = "claude"
model = "sonnet"
"""


def _fake_bins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    for name in names:
        exe = bin_dir / name
        exe.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))


def _project(tmp_path: Path, text: str) -> Path:
    project = tmp_path / "project"
    (project / ".tunaflow").mkdir(parents=True)
    (project / ".tunaflow" / "config.toml").write_text(text, encoding="utf-8")
    return project


def test_no_cli_installed_means_every_role_uses_demo(config_home: Path) -> None:
    settings = load_settings()
    assert {settings.roles.engine_name(r) for r in ROLE_NAMES} == {"demo"}
    assert settings.using_demo_only
    assert settings.engines["demo"].effective_type == "demo"


def test_defaults_pick_installed_clis_with_two_vendors_for_review(
    config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_bins(tmp_path, monkeypatch, "claude", "codex")
    settings = load_settings()
    assert settings.roles.architect == "claude"
    assert settings.roles.developer == "claude"
    assert {settings.roles.reviewer, settings.roles.verifier} == {"claude", "codex"}
    assert not settings.using_demo_only


def test_three_vendors_give_reviewer_and_verifier_their_own(
    config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_bins(tmp_path, monkeypatch, "claude", "codex", "gemini")
    settings = load_settings()
    assert (settings.roles.reviewer, settings.roles.verifier) == ("codex", "gemini")


def test_single_vendor_plays_every_role(config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_bins(tmp_path, monkeypatch, "gemini")
    settings = load_settings()
    assert {settings.roles.engine_name(r) for r in ROLE_NAMES} == {"gemini"}


def test_product_example_config_is_understood(config_home: Path) -> None:
    (config_home / "config.toml").write_text(PRODUCT_EXAMPLE, encoding="utf-8")
    settings = load_settings()
    sonnet = settings.engine_for_role("developer")
    assert (sonnet.name, sonnet.effective_type, sonnet.model) == ("claude-sonnet", "claude", "sonnet")
    assert settings.engine_for_role("reviewer").effective_type == "codex"
    assert settings.engines["claude"].command == "claude"
    assert settings.config_files == [config_home / "config.toml"]


def test_precedence_user_then_project_then_env(
    config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (config_home / "config.toml").write_text(
        '[workflow]\ndoom_threshold = 4\nauto_rework = true\n[ui]\ntheme = "user-theme"\nbell = false\n'
        '[roles]\nreviewer = "gemini"\narchitect = "claude"\n',
        encoding="utf-8",
    )
    project = _project(tmp_path, '[workflow]\ndoom_threshold = 7\n[roles]\nreviewer = "claude"\n')
    settings = load_settings(project)
    # project overrides user per key, keeping the user's other keys of the same table
    assert settings.workflow.doom_threshold == 7
    assert settings.workflow.auto_rework is True
    assert settings.ui.theme == "user-theme" and settings.ui.bell is False
    assert settings.roles.reviewer == "claude" and settings.roles.architect == "claude"

    monkeypatch.setenv("TUNAFLOW_WORKFLOW__DOOM_THRESHOLD", "5")
    monkeypatch.setenv("TUNAFLOW_ROLES__REVIEWER", "codex")
    settings = load_settings(project)
    assert settings.workflow.doom_threshold == 5
    assert settings.roles.reviewer == "codex"
    assert settings.workflow.auto_rework is True


def test_env_can_override_an_engine_field(config_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUNAFLOW_ENGINES__CLAUDE__MODEL", "opus")
    monkeypatch.setenv("TUNAFLOW_WORKFLOW__TEST_COMMAND", '["make", "check"]')
    settings = load_settings()
    assert settings.engines["claude"].model == "opus"
    assert settings.engines["claude"].name == "claude"
    assert settings.workflow.test_command == ["make", "check"]


def test_workflow_defaults(config_home: Path, tmp_path: Path) -> None:
    settings = load_settings()
    wf = settings.workflow
    assert (wf.doom_threshold, wf.auto_review, wf.auto_rework, wf.test_command) == (3, True, False, None)
    assert wf.test_timeout_s == 600 and wf.use_worktree is True
    assert wf.worktree_root == tmp_path / "xdg-data" / "tunaflow" / "worktrees"
    assert settings.ui.mouse is True and settings.ui.notify_desktop is False


def test_force_demo_overrides_configured_roles(config_home: Path) -> None:
    (config_home / "config.toml").write_text(PRODUCT_EXAMPLE + "\n[engines.demo]\ndemo_delay_s = 0\n",
                                             encoding="utf-8")
    settings = load_settings(force_demo=True)
    assert settings.using_demo_only
    assert settings.engine_for_role("developer").demo_delay_s == 0


def test_role_pointing_at_undefined_engine_names_file_and_key(config_home: Path, tmp_path: Path) -> None:
    project = _project(tmp_path, '[roles]\nreviewer = "gpt-local"\n')
    with pytest.raises(SettingsError) as info:
        load_settings(project)
    message = str(info.value)
    assert str(project / ".tunaflow" / "config.toml") in message
    assert "roles.reviewer" in message and "gpt-local" in message
    assert info.value.key == "roles.reviewer"


def test_undefined_engine_from_env_names_the_variable(config_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUNAFLOW_ROLES__VERIFIER", "nope")
    with pytest.raises(SettingsError, match="TUNAFLOW_ROLES__VERIFIER"):
        load_settings()


def test_malformed_toml_reports_file_and_line(config_home: Path) -> None:
    path = config_home / "config.toml"
    path.write_text('[roles]\narchitect = "claude"\ndeveloper = \n', encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert info.value.line == 3
    assert f"{path}, line 3" in str(info.value)


def test_wrong_value_type_names_file_and_key(config_home: Path) -> None:
    path = config_home / "config.toml"
    path.write_text('[workflow]\ndoom_threshold = "many"\n', encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert str(path) in str(info.value) and "workflow.doom_threshold" in str(info.value)


def test_unknown_engine_type_is_refused(config_home: Path) -> None:
    (config_home / "config.toml").write_text('[engines.lmstudio]\nbase_url = "http://x"\n', encoding="utf-8")
    with pytest.raises(SettingsError, match=r"engines\.lmstudio\.type"):
        load_settings()


def test_unknown_key_in_a_table_is_an_error(config_home: Path) -> None:
    (config_home / "config.toml").write_text("[engines.claude]\nmodle = 'x'\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="modle"):
        load_settings()


def test_loading_reads_nothing_at_import_and_creates_no_files(config_home: Path, tmp_path: Path) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    load_settings(tmp_path / "no-such-project")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert os.listdir(config_home) == []


@pytest.mark.parametrize(("text", "unknown"), [('[role]\narchitect = "demo"\n', "role"), ("theme = 'x'\n", "theme")])
def test_unknown_top_level_key_names_file_key_and_valid_tables(
    config_home: Path, tmp_path: Path, text: str, unknown: str
) -> None:
    project = _project(tmp_path, text)
    with pytest.raises(SettingsError) as info:
        load_settings(project)
    message = str(info.value)
    assert str(project / ".tunaflow" / "config.toml") in message
    assert info.value.key == unknown and repr(unknown) in message
    for table in ("[roles]", "[engines]", "[workflow]", "[ui]", "[context]"):
        assert table in message


def test_misspelled_table_in_the_user_file_is_refused_too(config_home: Path) -> None:
    path = config_home / "config.toml"
    path.write_text('[role]\narchitect = "demo"\n', encoding="utf-8")
    with pytest.raises(SettingsError, match=r"did you mean \[roles\]") as info:
        load_settings()
    assert str(path) in str(info.value)


def test_acp_agents_found_on_path_are_offered_as_engines_without_taking_roles(
    config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_bins(tmp_path, monkeypatch, "gemini", "codex-acp", "claude-code-acp")
    settings = load_settings()
    offered = {name: (e.effective_type, e.command) for name, e in settings.engines.items() if e.type == "acp"}
    assert offered == {"gemini-acp": ("acp", "gemini --acp"), "codex-acp": ("acp", "codex-acp"),
                       "claude-acp": ("acp", "claude-code-acp")}
    assert {settings.roles.engine_name(r) for r in ROLE_NAMES} == {"gemini"}
