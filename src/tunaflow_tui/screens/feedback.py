"""Modal feedback editor used when the user requests a plan revision."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Static, TextArea

from tunaflow_tui.screens.dialog import DialogScreen

FEEDBACK_MAX_BYTES = 256 * 1024

Runner = Callable[[list[str]], object]


def editor_argv(environ: Mapping[str, str] | None = None) -> list[str]:
    """The user's editor command as an argv list ($VISUAL, then $EDITOR, then vi); never a shell."""
    env = os.environ if environ is None else environ
    command = env.get("VISUAL") or env.get("EDITOR") or "vi"
    return shlex.split(command) or ["vi"]


def edit_text_externally(text: str, argv: list[str], run: Runner | None = None, *,
                         prefix: str = "tunaflow-feedback-") -> str:
    """Write `text` to a temporary file, run `argv + [file]`, and return the file's new content."""
    runner: Runner = run or (lambda args: subprocess.run(args, check=False))
    handle, name = tempfile.mkstemp(prefix=prefix, suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        runner([*argv, str(path)])
        with path.open("rb") as file:
            data = file.read(FEEDBACK_MAX_BYTES)
        return data.decode("utf-8", errors="replace")
    finally:
        path.unlink(missing_ok=True)



def edit_area_externally(screen: Screen[Any], area: TextArea, run: Runner | None, *,
                         prefix: str = "tunaflow-feedback-", guide: str = "") -> str | None:
    """Hand the terminal to ``$VISUAL`` / ``$EDITOR`` on ``area``'s text and load what it saved.

    ``guide`` (a line or a comment for the editor only) is written above the text and taken off
    again when it comes back unchanged. Returns the edited text, or None (said in a toast) when the
    terminal cannot be handed over or the editor cannot run.
    """
    lead = f"{guide}\n" if guide else ""
    try:
        with screen.app.suspend():
            edited = edit_text_externally(lead + area.text, editor_argv(), run, prefix=prefix)
        edited = edited.removeprefix(lead)
    except SuspendNotSupported:
        screen.notify("This terminal cannot hand over to an external editor.", severity="warning")
        return None
    except OSError as error:
        screen.notify(f"Could not run the editor: {error}", severity="error")
        return None
    area.load_text(edited)
    area.focus()
    return edited

class FeedbackScreen(DialogScreen[str | None]):
    """Ask for revision feedback. Dismisses with the text, or None when cancelled."""

    DEFAULT_CSS = """
    FeedbackScreen > #dialog { max-width: 100; }
    FeedbackScreen TextArea { height: 10; }
    FeedbackScreen.-short TextArea { height: 7; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Send feedback", id="feedback.submit"),
        Binding("ctrl+e", "external_editor", "Edit in $EDITOR", id="feedback.editor",
                # priority: the text area's own ctrl+e (end of line) would take the key first
                priority=True),
        Binding("escape", "cancel", "Cancel", id="feedback.cancel"),
    ]

    key_ids: ClassVar[tuple[str, str, str]] = ("feedback.editor", "feedback.cancel", "feedback.submit")
    """The binding ids of (external editor, cancel, submit), named on the buttons."""
    submit_words: ClassVar[str] = "Send"
    empty_words: ClassVar[str] = "Write some feedback first, or press escape to cancel."

    def __init__(
        self,
        title: str = "Request plan revision",
        prompt: str = "What should the Architect change?",
        initial: str = "",
        run_editor: Runner | None = None,
    ) -> None:
        super().__init__()
        self._title = title
        self._prompt = prompt
        self._initial = initial
        self._run_editor = run_editor

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._title
            yield Static(self._prompt, id="prompt", classes="field-label", markup=False)
            area = TextArea(self._initial, id="feedback", soft_wrap=True)
            area.cursor_blink = False
            yield area
            yield Static("", id="empty-hint", classes="dialog-problem")
            with Horizontal(id="buttons", classes="dialog-buttons"):
                editor, cancel, submit = self.key_ids
                yield Button(f"Edit in $EDITOR ({self._key(editor)})", id="editor")
                yield Button(f"Cancel ({self._key(cancel)})", id="cancel")
                yield Button(f"{self.submit_words} ({self._key(submit)})", id="submit", variant="primary")

    def _key(self, binding_id: str) -> str:
        from tunaflow_tui.keyhints import key_for

        return key_for(self.app, type(self), binding_id, words=True)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    @property
    def text(self) -> str:
        """The feedback typed so far."""
        return self.query_one(TextArea).text

    def action_submit(self) -> None:
        """Send the feedback; empty feedback is refused with a hint."""
        text = self.text.strip()
        if not text:
            self.query_one("#empty-hint", Static).update(self.empty_words)
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        """Close without sending anything."""
        self.dismiss(None)

    def action_external_editor(self) -> None:
        """Edit the feedback in ``$VISUAL`` / ``$EDITOR`` (the terminal is handed over meanwhile)."""
        edit_area_externally(self, self.query_one(TextArea), self._run_editor)

    @on(Button.Pressed, "#submit")
    def _submit_pressed(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#editor")
    def _editor_pressed(self) -> None:
        self.action_external_editor()
