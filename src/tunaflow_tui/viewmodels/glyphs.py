"""The few symbols the app draws, chosen from what every common monospace font has.

⎇ (U+2387) and Textual's default header icon ⭘ (U+2B58) are missing from DejaVu Sans Mono (the
default monospace font of many Linux desktops) and show as empty boxes there; these are in it, and
in Menlo, Consolas, Cascadia and Noto Sans Mono alike.
"""

from __future__ import annotations

BRANCH = "↳"
"""Marks a branch: a conversation that went off from another one."""
APP_ICON = "◉"
"""The header's icon (click it for the command palette)."""

WORKING = "●"
"""Marks a plan or branch an agent works in now."""
WAITING = "◆"
"""Marks a plan that waits for the user's decision."""

ALL: tuple[str, ...] = (BRANCH, APP_ICON, WORKING, WAITING)
