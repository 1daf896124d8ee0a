"""A controller for chat UI tests: serves a list of messages and records what the app asks of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tunaflow_tui.app import TunaflowApp
from tunaflow_tui.viewmodels.chat import ListMessageSource, MessageSource, MessageView


@dataclass
class RecordingController:
    """A controller that serves a list of messages and records what the app asks of it."""

    source: ListMessageSource
    recipient_label: str = "Architect (claude)"
    sent: list[tuple[str, str]] = field(default_factory=list)
    retried: list[tuple[str, int]] = field(default_factory=list)
    app: TunaflowApp | None = None
    session: None = None  # no project: the workflow keys say there is none
    is_open: bool = True
    error: str | None = None

    def attach(self, app: TunaflowApp) -> None:
        self.app = app

    async def ready(self) -> None:
        pass

    def hold_update(self, update: object) -> None:
        pass

    def message_source(self, conversation_id: str) -> MessageSource:
        return self.source

    def recipient(self, conversation_id: str) -> str:
        return self.recipient_label

    def send(self, conversation_id: str, text: str) -> None:
        self.sent.append((conversation_id, text))

    def retry(self, conversation_id: str, message_id: int) -> None:
        self.retried.append((conversation_id, message_id))


def chat_app(messages: Sequence[MessageView], **kwargs: object) -> TunaflowApp:
    """The app on ``messages`` (no project, nothing sent anywhere)."""
    return TunaflowApp(RecordingController(ListMessageSource(list(messages))), cursor_blink=False,  # type: ignore[arg-type]
                       **kwargs)
