"""AdoptCard: an adopted branch's summary in its parent conversation, with where it came from.

It shows the branch's label, how many messages the branch held, its engine and git branch, the diff
stat when the branch has commits, the summary (a fallback summary says so), and the key that opens
the branch, now in the Archive. It arrives unfolded: the summary is what the user adopted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from textual.message import Message

from tunaflow_tui.core.counting import counted
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.viewmodels.glyphs import BRANCH
from tunaflow_tui.widgets.decision.records.record_card import RecordCard


def _text(meta: Mapping[str, object], key: str) -> str:
    value = meta.get(key)
    return neutralize(str(value)) if value not in (None, "") else ""


class AdoptCard(RecordCard):
    """The card of a ``branch_adopt`` record (see :mod:`tunaflow_tui.runtime.adoption`)."""

    KIND: ClassVar[str] = "branch_adopt"

    DEFAULT_CSS = """
    AdoptCard { border-left: outer $success; padding: 0 1; }
    """

    @dataclass
    class OpenBranch(Message):
        """The user asked to see the adopted branch."""

        branch_id: int

    def __init__(self, meta: Mapping[str, object], *, classes: str | None = None) -> None:
        super().__init__(meta, classes=classes)
        self.set_reactive(RecordCard.expanded, True)

    @property
    def branch_id(self) -> int | None:
        """The adopted branch."""
        value = self.meta.get("branch_id")
        return value if isinstance(value, int) else None

    def facts(self) -> str:
        """``2 messages · demo · git main``."""
        count = self.meta.get("message_count")
        parts = [counted(count if isinstance(count, int) else 0, "message")]
        for key, prefix in (("engine", ""), ("git_branch", "git ")):
            value = _text(self.meta, key)
            if value:
                parts.append(prefix + value)
        return " · ".join(parts)

    def headline(self) -> str:
        """``↳ Adopted branch 3: label``."""
        label = " ".join(_text(self.meta, "branch_label").split()) or "branch"
        return f"{BRANCH} Adopted branch {self.meta.get('branch_id', '?')}: {label}"

    def details(self) -> list[str]:
        """Provenance, the summary, a fallback's note, the diff stat, and the key that opens the branch."""
        lines = [self.facts(), ""]
        lines += _text(self.meta, "summary").splitlines()
        note = _text(self.meta, "summary_note")
        if note:
            lines += ["", f"⚠ {note}"]
        diff = _text(self.meta, "diff_stat")
        if diff:
            lines += ["", *diff.splitlines()]
        if self.branch_id is not None:
            lines += ["", f"{self.open_key} opens the branch (Archive)"]
        return lines

    open_key: str = "o"
    """The key named for opening the branch (the message holding the card sets the one in force)."""

    def open(self) -> None:
        """Ask for the adopted branch in the branch pane."""
        if self.branch_id is not None:
            self.post_message(self.OpenBranch(self.branch_id))
