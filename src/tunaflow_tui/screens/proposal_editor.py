"""ProposalEditorScreen: edit a plan proposal before approving it, inline or in ``$EDITOR``.

The proposal is Markdown (:func:`~tunaflow_tui.core.proposal_editing.proposal_to_editable_text`):
title, subtasks (one list item each: add, remove, reorder, reword), description, expected outcome,
constraints, non-goals. Saving reads it back strictly; text that cannot be read keeps the editor
open with the problem and its line named, the cursor on that line and nothing lost.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static, TextArea

from tunaflow_tui.core.proposal_editing import (
    EDITOR_GUIDE,
    EditedProposal,
    ProposalTextError,
    parse_edited_proposal,
    without_editor_guide,
)
from tunaflow_tui.keyhints import key_for
from tunaflow_tui.screens.dialog import DialogScreen
from tunaflow_tui.screens.feedback import Runner, edit_area_externally


class ProposalEditorScreen(DialogScreen[EditedProposal | None]):
    """Edit a proposal's Markdown; dismisses with the edited proposal, or None when cancelled."""

    DEFAULT_CSS = """
    ProposalEditorScreen > #dialog { width: 90%; max-width: 110; height: 1fr; max-height: 40; }
    ProposalEditorScreen TextArea { height: 1fr; }
    ProposalEditorScreen #problem { text-style: bold; }
    ProposalEditorScreen #buttons { margin-top: 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save the plan", id="edit.save"),
        Binding("ctrl+e", "external_editor", "Edit in $EDITOR", id="edit.editor",
                # priority: the text area's own ctrl+e (end of line) would take the key first
                priority=True),
        Binding("escape", "cancel", "Cancel", id="edit.cancel"),
    ]

    def __init__(self, text: str, *, revision: int = 1, run_editor: Runner | None = None) -> None:
        super().__init__()
        self._text = without_editor_guide(text)  # the label above says it; the guide is for $EDITOR
        self._revision = revision
        self._run_editor = run_editor

    def _key(self, binding_id: str) -> str:
        return key_for(self.app, type(self), binding_id, words=True)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = "Edit plan" + (f" · revision {self._revision}" if self._revision > 1 else "")
            yield Static(f"Subtasks are numbered by position: add, remove or move lines. "
                         f"{self._key('edit.save')} saves; the plan card then waits for your approval.",
                         id="editor-help", classes="field-label", markup=False)
            area = TextArea(self._text, id="proposal-text", soft_wrap=True)
            area.cursor_blink = False
            yield area
            yield Static("", id="problem", classes="dialog-problem", markup=False)
            with Horizontal(id="buttons", classes="dialog-buttons"):
                yield Button(f"Edit in $EDITOR ({self._key('edit.editor')})", id="editor")
                yield Button(f"Cancel ({self._key('edit.cancel')})", id="cancel")
                yield Button(f"Save ({self._key('edit.save')})", id="save", variant="primary")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    @property
    def text(self) -> str:
        """The Markdown as it stands in the editor."""
        return self.query_one(TextArea).text

    def action_save(self) -> None:
        area = self.query_one(TextArea)
        try:
            edited = parse_edited_proposal(area.text)
        except ProposalTextError as error:
            self.query_one("#problem", Static).update(f"Not saved — line {error.line}: {error.problem}")
            row = max(0, min(error.line - 1, area.document.line_count - 1))
            area.move_cursor((row, 0))
            area.focus()
            return
        self.dismiss(edited)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_external_editor(self) -> None:
        area = self.query_one(TextArea)
        before = area.text
        edited = edit_area_externally(self, area, self._run_editor, prefix="tunaflow-plan-", guide=EDITOR_GUIDE)
        if edited is not None and edited != before:  # closed after saving: done, as with a commit message
            self.action_save()

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#editor")
    def _editor_pressed(self) -> None:
        self.action_external_editor()
