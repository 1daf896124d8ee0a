"""A project whose own configuration names commands: ask its user once before any of them runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tunaflow_tui.core.settings import Settings


def untrusted_note(settings: Settings) -> str:
    """What the status line says while the project's own commands are left out (empty when none are)."""
    decided = settings.project_trust
    if decided is None or decided.state.value not in ("untrusted", "denied"):
        return ""
    return (f"This project's .tunaflow/config.toml names commands that are not used until you trust them "
            f"({'; '.join(decided.lines)}). Read them, then run `tunaflow trust {decided.project}`.")


def wants_trust_prompt(settings: Settings) -> bool:
    """True when the user has not decided about the project's commands (a "never" is not asked again)."""
    decided = settings.project_trust
    return decided is not None and decided.state.value == "untrusted"
