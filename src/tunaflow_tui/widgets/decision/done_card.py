"""DoneCard: a finished plan and its merge offer (**m** merge, **x** remove the worktree)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from tunaflow_tui.viewmodels.plan_rows import DoneView
from tunaflow_tui.widgets.decision.decision_card import DecisionCard

DONE = Binding.Group("Done")

__all__ = ["DoneCard", "DoneView"]


class DoneCard(DecisionCard, Vertical, can_focus=True):
    """A done plan: **m** merges its branch into the base, **x** removes its worktree.

    After the card took the focus on its own its keys arm a moment later
    (see :mod:`tunaflow_tui.widgets.decision.arming`).
    """

    CARD_NAME: ClassVar[str] = "finished plan"

    DOCK_KIND: ClassVar[str] = "done"

    HINTS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("done.merge", "merge"),
        ("done.remove_worktree", "remove worktree"),
    )

    HELP = """
## Plan done

- **m** merge the plan's branch into its base (fast-forward or a merge commit; never forced).
- **x** remove the plan's worktree (its git branch stays).
"""

    DEFAULT_CSS = """
    DoneCard { height: auto; border: round $success; padding: 0 1; margin: 1 0 0 0; border-title-style: bold; }
    DoneCard.-overridden { border: round $warning; }
    DoneCard .outcome { color: $text-warning; }
    DoneCard .keys { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "done('merge')", "Merge plan", id="done.merge", group=DONE,
                tooltip="Merge the plan's branch into its base"),
        Binding("x", "done('remove_worktree')", "Remove worktree", id="done.remove_worktree", group=DONE,
                tooltip="Remove the plan's worktree; the git branch stays"),
    ]

    @dataclass
    class Requested(Message):
        """The user asked to ``merge`` or ``remove_worktree`` for a done plan."""

        plan_id: int
        action: str

    view: reactive[DoneView] = reactive(DoneView(0, ""), recompose=True)

    def __init__(self, view: DoneView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(DoneCard.view, view)

    def compose(self) -> ComposeResult:
        view = self.view
        # accepted over a failed or incomplete review: the card says so, never a plain "done"
        owner = self.keys_owner()
        self.border_title = f"⚠ {owner} done — {view.outcome}" if view.outcome else f"✔ {owner} done"
        self.set_class(bool(view.outcome), "-overridden")
        yield Static(view.title, markup=False)
        if view.outcome:
            yield Static(f"You accepted it {view.outcome.removeprefix('accepted ')}.", classes="outcome",
                         markup=False)
        if view.merged:
            yield Static(f"Merged into {view.base_branch}: {view.merged}", markup=False)
        elif view.git_branch:
            yield Static(f"{view.git_branch} is ready to merge into {view.base_branch}.", markup=False)
        else:
            yield Static("The work was done in place (no git branch to merge).", markup=False)
        if tuple(self.hint_items()):
            yield Static(self.key_content(), classes="keys")

    def hint_items(self) -> tuple[tuple[str, str], ...]:
        """Merge until merged (when there is a branch); remove while the worktree exists."""
        view = self.view
        wanted = {"done.merge": bool(view.git_branch) and not view.merged,
                  "done.remove_worktree": view.has_worktree}
        return tuple(item for item in self.HINTS if wanted[item[0]])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Merge only while there is an unmerged branch; remove only while the worktree exists."""
        if action == "done":
            if parameters and parameters[0] == "merge":
                return bool(self.view.git_branch) and not self.view.merged
            return self.view.has_worktree
        return True

    def action_done(self, action: str) -> None:
        """Ask to ``merge`` or ``remove_worktree`` (once the keys are armed)."""
        if self.check_action("done", (action,)) and self.keys_armed():
            self.post_message(self.Requested(self.view.plan_id, action))

    def update_view(self, view: DoneView) -> None:
        """Show a new state (after a merge or a worktree removal)."""
        self.view = view
        self.refresh_bindings()
