"""Fixtures for the chat UI: a recording controller, message factories, screen text."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from app_harness import screen_text
from chat_controller import RecordingController
from textual.app import App

from tunaflow_tui.app import TunaflowApp
from tunaflow_tui.core.turns import ToolLine
from tunaflow_tui.viewmodels.chat import ErrorView, ListMessageSource, MessageView


def numbered_messages(count: int, start: int = 1) -> list[MessageView]:
    """``count`` alternating user/assistant messages with distinct text."""
    return [
        MessageView(
            i,
            "user" if i % 2 else "assistant",
            "You" if i % 2 else "Architect · claude · sonnet",
            f"message number {i}",
        )
        for i in range(start, start + count)
    ]


def conversation() -> list[MessageView]:
    """A short conversation with every kind of block: user, assistant with tools and usage."""
    return [
        MessageView(1, "user", "You", "Add a login page, please. 한국어도 잘 보이나요?"),
        MessageView(
            2,
            "assistant",
            "Architect · claude · sonnet",
            "Here is the idea:\n\n1. Add a `/login` route\n2. Add the form\n\n```python\ndef login():\n    ...\n```",
            usage_text="1,234 in · 210 out · $0.0123",
            tools=(ToolLine("Read", "src/app.py"), ToolLine("Grep", "login"), ToolLine("Edit", "src/routes.py")),
        ),
        MessageView(3, "user", "You", "Sounds good."),
    ]


def failed_message(message_id: int = 4) -> MessageView:
    return MessageView(
        message_id,
        "assistant",
        "Reviewer · gemini · 2.5-pro",
        "",
        status="error",
        error=ErrorView("timeout", "no output for 300 s", "Loaded cached credentials.\nError: deadline exceeded"),
    )


def interrupted_message(message_id: int = 4) -> MessageView:
    return MessageView(
        message_id, "assistant", "Developer · codex", "I started editing `src/routes.py` and", status="interrupted"
    )


@pytest.fixture
def make_app() -> Callable[..., tuple[TunaflowApp, RecordingController]]:
    def factory(messages: Sequence[MessageView] = (), **kwargs: object) -> tuple[TunaflowApp, RecordingController]:
        controller = RecordingController(ListMessageSource(messages))
        app = TunaflowApp(controller, cursor_blink=False, **kwargs)  # type: ignore[arg-type]
        return app, controller

    return factory


@pytest.fixture
def read_screen() -> Callable[[App[object]], str]:
    return screen_text


@pytest.fixture
def messages() -> dict[str, Callable[..., object]]:
    return {
        "numbered": numbered_messages,
        "conversation": conversation,
        "failed": failed_message,
        "interrupted": interrupted_message,
    }
