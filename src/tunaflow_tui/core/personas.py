"""Personas: the Markdown prompt that teaches each role its job and its markers.

Built-ins ship in ``tunaflow_tui/data/personas/``; a project may override any of them with
``<project>/.tunaflow/personas/{role}.md``.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

BUILTIN_ROLES: tuple[str, ...] = ("architect", "developer", "reviewer", "verifier", "synthesizer", "summarizer")
"""Roles with a persona shipped in the package."""

_ROLE_RE = re.compile(r"[a-z][a-z0-9_-]{0,39}")


class PersonaError(ValueError):
    """A persona name is invalid, or no persona exists for it."""


def validate_role(role: str) -> str:
    """Return ``role`` if it is a safe persona name (lower-case letters, digits, ``-``, ``_``)."""
    if not _ROLE_RE.fullmatch(role):
        raise PersonaError(f"invalid persona name {role!r}: use lower-case letters, digits, '-' or '_'")
    return role


def project_persona_dir(project_dir: Path) -> Path:
    """Where a project keeps its persona overrides."""
    return project_dir / ".tunaflow" / "personas"


def _project_override(role: str, project_dir: Path) -> str | None:
    folder = project_persona_dir(project_dir)
    candidate = folder / f"{role}.md"
    if not candidate.is_file():
        return None
    # A symlink pointing out of the personas folder is not an override.
    if not candidate.resolve().is_relative_to(folder.resolve()):
        raise PersonaError(f"{candidate} points outside {folder}; refusing to read it")
    return candidate.read_text(encoding="utf-8")


def builtin_persona(role: str) -> str:
    """The packaged persona text for ``role``."""
    validate_role(role)
    resource = resources.files("tunaflow_tui").joinpath("data", "personas", f"{role}.md")
    if not resource.is_file():
        raise PersonaError(f"no persona named {role!r} (built-in: {', '.join(BUILTIN_ROLES)})")
    return resource.read_text(encoding="utf-8")


def load_persona(role: str, project_dir: Path | None = None) -> str:
    """The persona prompt for ``role``: the project's override if present, else the built-in one."""
    validate_role(role)
    if project_dir is not None:
        override = _project_override(role, project_dir)
        if override is not None:
            return override
    return builtin_persona(role)


def persona_source(role: str, project_dir: Path | None = None) -> str:
    """Where ``load_persona`` would read ``role`` from: a file path, or ``built-in``."""
    validate_role(role)
    if project_dir is not None:
        candidate = project_persona_dir(project_dir) / f"{role}.md"
        if candidate.is_file():
            return str(candidate)
    return "built-in"
