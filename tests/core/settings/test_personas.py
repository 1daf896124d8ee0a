"""Personas: built-ins teach the exact markers; project overrides win; names cannot escape."""

from __future__ import annotations

from pathlib import Path

import pytest

from tunaflow_tui.core.personas import BUILTIN_ROLES, PersonaError, load_persona, persona_source


@pytest.mark.parametrize("role", BUILTIN_ROLES)
def test_every_builtin_persona_loads(role: str) -> None:
    text = load_persona(role)
    assert text.startswith("# Role: ") and role in text.lower()


def test_personas_teach_their_markers_exactly() -> None:
    architect = load_persona("architect")
    assert "<!-- tunaflow:plan-proposal -->" in architect and "<!-- /tunaflow:plan-proposal -->" in architect
    for section in ("title:", "subtasks:", "description:", "expected outcome:", "constraints:", "non-goals:"):
        assert section in architect
    developer = load_persona("developer")
    assert "<!-- tunaflow:subtask-done:N -->" in developer and "<!-- tunaflow:impl-complete -->" in developer
    for role in ("reviewer", "verifier"):
        text = load_persona(role)
        assert "<!-- tunaflow:review-verdict -->" in text and "<!-- /tunaflow:review-verdict -->" in text
        assert "verdict: pass | fail | conditional" in text
        for key in ("plan_coverage", "code_quality", "test_coverage", "convention", "failed_subtasks",
                    "findings:", "recommendations:"):
            assert key in text
        assert "read-only" in text
    assert "<!-- tunaflow:consensus -->" in load_persona("synthesizer")


def test_project_override_wins(tmp_path: Path) -> None:
    folder = tmp_path / ".tunaflow" / "personas"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").write_text("# Role: Reviewer\nbe strict\n", encoding="utf-8")
    assert load_persona("reviewer", tmp_path) == "# Role: Reviewer\nbe strict\n"
    assert persona_source("reviewer", tmp_path) == str(folder / "reviewer.md")
    assert "Architect" in load_persona("architect", tmp_path)  # no override: built-in
    assert persona_source("architect", tmp_path) == "built-in"


@pytest.mark.parametrize("role", ["../../etc/passwd", "..", "a/b", "Reviewer", "", "x" * 60, "rev\x00"])
def test_path_escape_is_refused(role: str, tmp_path: Path) -> None:
    with pytest.raises(PersonaError):
        load_persona(role, tmp_path)


def test_symlinked_override_outside_the_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token", encoding="utf-8")
    folder = tmp_path / ".tunaflow" / "personas"
    folder.mkdir(parents=True)
    (folder / "architect.md").symlink_to(secret)
    with pytest.raises(PersonaError, match="outside"):
        load_persona("architect", tmp_path)


def test_unknown_role_without_override_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PersonaError, match="no persona named 'poet'"):
        load_persona("poet", tmp_path)
    folder = tmp_path / ".tunaflow" / "personas"
    folder.mkdir(parents=True)
    (folder / "poet.md").write_text("write verse", encoding="utf-8")
    assert load_persona("poet", tmp_path) == "write verse"
