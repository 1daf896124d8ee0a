"""The composer: enter sends, chords insert newlines, empty text is never sent."""

from __future__ import annotations

import pytest
from textual.app import App
from waiting import until

from tunaflow_tui.textual_compat import parse_terminal_input
from tunaflow_tui.widgets.composer import Composer


def type_bytes(app: App[object], data: str) -> None:
    """Deliver terminal input the way the driver does: parse it, post every key at once (a burst)."""
    for message in parse_terminal_input(data):
        app.post_message(message)


async def test_enter_sends_and_clears(make_app) -> None:
    app, controller = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"hello there")
        await pilot.press("enter")
        await pilot.pause()
        assert controller.sent == [("main", "hello there")]
        assert app.composer.text == ""


async def test_ctrl_j_and_shift_enter_insert_a_newline_instead_of_sending(make_app) -> None:
    app, controller = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("a", "ctrl+j", "b", "shift+enter", "c")
        await pilot.pause()
        assert controller.sent == []
        assert app.composer.text == "a\nb\nc"
        await pilot.press("enter")
        await pilot.pause()
        assert controller.sent == [("main", "a\nb\nc")]


@pytest.mark.parametrize(
    "chord",
    [
        pytest.param("\n", id="ctrl+j-line-feed"),
        pytest.param("\x1b[106;5u", id="ctrl+j-kitty-protocol"),
        pytest.param("\x1b[13;2u", id="shift+enter-kitty-protocol"),
    ],
)
async def test_newline_bytes_in_a_burst_land_between_the_letters(make_app, chord: str) -> None:
    app, controller = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        type_bytes(app, f"ab{chord}cd")
        await pilot.pause()
        assert controller.sent == []
        assert app.composer.text == "ab\ncd"
        type_bytes(app, "\r")
        await pilot.pause()
        assert controller.sent == [("main", "ab\ncd")]
        assert app.composer.text == ""


async def test_keys_typed_right_after_enter_start_the_next_message(make_app) -> None:
    app, controller = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        type_bytes(app, "first message\rsec")
        await until(pilot, lambda: controller.sent and app.composer.text == "sec", "the whole burst handled")
        assert controller.sent == [("main", "first message")]
        assert app.composer.text == "sec"


async def test_alt_enter_from_a_terminal_arrives_as_enter_and_sends(make_app) -> None:
    # Alt as Meta sends ESC CR, which the app reads as a plain enter: this is why the composer
    # does not offer alt+enter for a new line.
    app, controller = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        type_bytes(app, "ab\x1b\r")
        await until(pilot, lambda: controller.sent, "the burst handled")
        assert controller.sent == [("main", "ab")]
        assert "alt+enter" not in Composer.HELP


async def test_empty_or_blank_text_is_not_sent(make_app) -> None:
    app, controller = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter")
        await pilot.press("space", "space", "ctrl+j", "enter")
        await pilot.pause()
        assert controller.sent == []


async def test_recipient_is_shown_and_follows_the_reactive(make_app, read_screen) -> None:
    app, _ = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        assert "→ Architect (claude)" in read_screen(app)
        app.composer.recipient = "Developer (codex)"
        await pilot.pause()
        assert "→ Developer (codex)" in read_screen(app)


async def test_disabled_composer_does_not_send(make_app, read_screen) -> None:
    app, controller = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("x")
        app.composer.disabled = True
        await pilot.pause()
        assert app.composer.submit() is False
        assert controller.sent == []
        assert "sending is paused" in read_screen(app)


async def test_history_recalls_earlier_messages(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for word in ("first", "second"):
            await pilot.press(*word, "enter")
        await pilot.press("ctrl+up")
        assert app.composer.text == "second"
        await pilot.press("ctrl+up")
        assert app.composer.text == "first"
        await pilot.press("ctrl+down", "ctrl+down")
        assert app.composer.text == ""


async def test_submitted_message_carries_the_text(make_app) -> None:
    app, _ = make_app()
    seen: list[Composer.Submitted] = []
    async with app.run_test(size=(80, 24), message_hook=lambda m: seen.append(m) if isinstance(m, Composer.Submitted) else None) as pilot:
        await pilot.press(*"한국어", "enter")
        await pilot.pause()
    # the hook sees the message at every node it bubbles through: one message, one text
    assert len({id(m) for m in seen}) == 1
    assert seen[0].text == "한국어"
