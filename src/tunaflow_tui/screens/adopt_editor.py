"""AdoptEditorScreen: the summary of a branch, edited before it goes into the parent conversation."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType

from tunaflow_tui.screens.feedback import FeedbackScreen


class AdoptEditorScreen(FeedbackScreen):
    """Edit a branch's summary (inline, or ctrl+e in ``$EDITOR``); dismisses with the text, None to cancel."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Adopt", id="adopt.confirm"),
        Binding("ctrl+e", "external_editor", "Edit in $EDITOR", id="adopt.editor",
                # priority: the text area's own ctrl+e (end of line) would take the key first
                priority=True),
        Binding("escape", "cancel", "Cancel", id="adopt.cancel"),
    ]

    key_ids: ClassVar[tuple[str, str, str]] = ("adopt.editor", "adopt.cancel", "adopt.confirm")
    submit_words: ClassVar[str] = "Adopt"
    empty_words: ClassVar[str] = "The summary is empty: write one, or press escape to keep the branch as it is."
