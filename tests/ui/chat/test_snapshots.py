"""What the chat looks like, at 80×24 and 120×40, in each state a user meets."""

from __future__ import annotations

import pytest
from chat_controller import chat_app
from waiting import until

from tunaflow_tui.core.turns import ToolLine
from tunaflow_tui.viewmodels.chat import ErrorView, MessageView

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


CONVERSATION = [
    MessageView(1, "user", "You", "Add a login page, please."),
    MessageView(
        2,
        "assistant",
        "Architect · claude · sonnet",
        "Here is the idea:\n\n1. Add a `/login` route\n2. Add the form\n\n```python\ndef login():\n    ...\n```",
        usage_text="1,234 in · 210 out · $0.0123",
        tools=(ToolLine("Read", "src/app.py"), ToolLine("Grep", "login"), ToolLine("Edit", "src/routes.py")),
    ),
    MessageView(3, "user", "You", "Sounds good."),
    MessageView(4, "assistant", "Architect · claude · sonnet", "Then I will write it up as a plan.",
                usage_text="2,001 in · 35 out"),
]


@pytest.mark.parametrize("size", SIZES)
def test_empty_chat(snap_compare, size) -> None:
    assert snap_compare(chat_app([]), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_conversation_with_tools_and_usage(snap_compare, size) -> None:
    assert snap_compare(chat_app(CONVERSATION), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_streaming_message(snap_compare, size) -> None:
    app = chat_app(CONVERSATION[:1])

    async def stream(pilot) -> None:
        block = await app.chat_view.start_stream(
            MessageView(2, "assistant", "Developer · codex · gpt-5", "", status="streaming")
        )
        for chunk in ("I am looking at ", "`src/routes.py`.\n\n", "- first step\n", "- second st"):
            await block.append(chunk)
        # streamed text reaches the screen on a stream tick, new lines on a growth beat: wait until
        # every chunk is drawn, not for luck
        await until(pilot, lambda: block.shows_all, "every chunk drawn")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=stream)


@pytest.mark.parametrize("size", SIZES)
def test_error_card(snap_compare, size) -> None:
    failed = MessageView(
        2, "assistant", "Reviewer · gemini · 2.5-pro", "", status="error",
        error=ErrorView("timeout", "no output for 300 s", "Loaded cached credentials.\nError: deadline exceeded"),
    )
    assert snap_compare(chat_app([*CONVERSATION[:1], failed]), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_interrupted_message(snap_compare, size) -> None:
    cut = MessageView(2, "assistant", "Developer · codex", "I started editing `src/routes.py` and",
                      status="interrupted")
    assert snap_compare(chat_app([*CONVERSATION[:1], cut]), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_wide_characters_align(snap_compare, size) -> None:
    korean = [
        MessageView(1, "user", "사용자", "로그인 페이지를 추가해 주세요. 표도 부탁해요."),
        MessageView(2, "assistant", "설계자 · claude", "| 항목 | 상태 |\n|---|---|\n| 로그인 | 완료 |\n| 회원가입 | 진행 중 |\n\n끝.",
                    usage_text="1,024 in · 64 out"),
    ]
    assert snap_compare(chat_app(korean), terminal_size=size)


async def _help_with_a_steady_cursor(pilot) -> None:
    from textual.widgets import Input

    await pilot.press("f1")
    for field in pilot.app.screen.query(Input):
        field.cursor_blink = False  # the filter's cursor would be drawn on or off by the clock
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_help_screen(snap_compare, size) -> None:
    assert snap_compare(chat_app([]), terminal_size=size, run_before=_help_with_a_steady_cursor)
