"""Which role may emit which marker: a security rule, not a convention."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from tunaflow_tui.core.markers.marker_model import MarkerKind

ROLE_PERMISSIONS: Final[MappingProxyType[str, frozenset[MarkerKind]]] = MappingProxyType(
    {
        "architect": frozenset({"plan-proposal"}),
        "developer": frozenset({"subtask-done", "impl-complete"}),
        "reviewer": frozenset({"review-verdict"}),
        "verifier": frozenset({"review-verdict"}),
        "synthesizer": frozenset({"consensus"}),
        "user": frozenset(),
    }
)

ROLES: Final = tuple(ROLE_PERMISSIONS)


def may_emit(role: str | None, kind: str) -> bool:
    """True if ``role`` may emit a marker of ``kind``; ``None`` (no role given) accepts everything.

    Unknown roles (e.g. a free roundtable role) may emit nothing.
    """
    if role is None:
        return True
    return kind in ROLE_PERMISSIONS.get(role.strip().casefold(), frozenset())
