"""The question asked when a project's own configuration names commands: trust them, not now, or never."""

from __future__ import annotations

from tunaflow_tui.screens.decision_screen import DecisionScreen

#: "Not now" first: it has the focus, so enter alone never trusts anything
TRUST_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("n", "Not now", "later"),
    ("t", "Trust", "trust"),
    ("v", "Never", "never"),
)
#: seconds during which keys do nothing: the prompt appears on its own as the project opens
TRUST_ARMING_S = 0.8


def trust_screen(project_name: str, lines: list[str]) -> DecisionScreen:
    """List every command the project's configuration names and ask whether tunaflow may run them."""
    listed = "\n".join(f"  {line}" for line in lines)
    return DecisionScreen(
        "Trust this project's commands?",
        f"{project_name}/.tunaflow/config.toml names commands tunaflow would run for you:\n{listed}\n"
        "Until you trust them they are not used (your own settings apply instead).\n"
        "Trust: run them from now on (asked again if they change). Never: not asked again for these.",
        TRUST_CHOICES,
        arming=TRUST_ARMING_S,
    )
