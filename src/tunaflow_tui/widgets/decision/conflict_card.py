"""ConflictCard: a done plan that no longer merges into its base, or whose Developer left the conflict.

Another plan landed first and changed the same files. Nothing was forced: the card names the files
and offers the two ways on — the Developer merges the base into the plan's branch and resolves the
conflicts (then the tests and the review run again), or the plan stays done and unmerged.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.widgets.decision.way_card import DECIDE, WAY_BINDINGS, WayCard

CONFLICT_BINDINGS: dict[Decision, str] = {
    Decision.RESOLVE_CONFLICT: "conflict.resolve",
    Decision.LEAVE_CONFLICT: "conflict.leave",
    Decision.RESUME: WAY_BINDINGS[Decision.RESUME],
    Decision.ABANDON: WAY_BINDINGS[Decision.ABANDON],
}
"""The binding id of each decision the conflict card can take."""


SHOWN_FILES = 8
"""Files a conflict card lists before it says how many more there are (it stays compact at 80×24)."""


def files_text(files: tuple[str, ...]) -> str:
    """The files in conflict, one per line (``… and 3 more`` past :data:`SHOWN_FILES`)."""
    lines = [f"  {path}" for path in files[:SHOWN_FILES]]
    if len(files) > SHOWN_FILES:
        lines.append(f"  … and {len(files) - SHOWN_FILES} more")
    return "In conflict:\n" + "\n".join(lines)


class ConflictCard(WayCard):
    """A way card for a merge conflict: its own keys, its own title."""

    CARD_NAME: ClassVar[str] = "merge conflict"

    HINTS: ClassVar[tuple[tuple[str, str], ...]] = tuple(
        (binding_id, decision.label.lower()) for decision, binding_id in CONFLICT_BINDINGS.items())

    HELP = """
## A merge conflict

Another plan landed on the base first and changed the same files. Nothing was merged and nothing
was lost. **r** asks the plan's Developer to merge the base into the plan's branch and resolve the
conflicts in its worktree; the tests and the review then run again on the result, and you decide
as usual. **l** leaves the plan done and unmerged, its branch as it was reviewed.
"""

    DEFAULT_CSS = """
    ConflictCard { border: round $error; }
    ConflictCard .files { margin-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "decide('resolve_conflict')", "Resolve", id="conflict.resolve", group=DECIDE,
                tooltip="The Developer merges the base into the plan's branch and resolves the conflicts"),
        Binding("l", "decide('leave_conflict')", "Leave unmerged", id="conflict.leave", group=DECIDE,
                tooltip="Keep the plan done and unmerged, its branch as reviewed"),
    ]

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            yield widget
            if "summary" in widget.classes and self.view.files:
                yield Static(files_text(self.view.files), classes="files", markup=False)
        if self.view.decision is None and not self.view.held:
            self.border_title = f"{self.keys_owner()} merge conflict"

    def hint_items(self) -> tuple[tuple[str, str], ...]:
        """The keys of the decisions the plan offers now, in the order it offers them."""
        if self.view.decision is not None:
            return ()
        items = []
        for name in self.view.decisions:
            binding_id = CONFLICT_BINDINGS.get(Decision(name))
            if binding_id is not None:
                items.append((binding_id, Decision(name).label.lower() + ("…" if name in self.view.confirm else "")))
        return tuple(items)

    def offers(self, decision: str) -> bool:
        """True when the plan offers ``decision`` now and this card has a key for it."""
        return (self.view.decision is None and decision in self.view.decisions
                and Decision(decision) in CONFLICT_BINDINGS)
