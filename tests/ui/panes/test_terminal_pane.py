"""The terminal pane driven by the stand-in TUI (tests/fakes/tty_app.py): keys in, screen out, focus, size, end."""

from __future__ import annotations

import pytest
from terminal_rig import TerminalApp, echoed, screen_text
from textual import events
from textual.widgets import Input
from waiting import until, until_sync

from tunaflow_tui.textual_compat import screen_strips
from tunaflow_tui.widgets.composer import Composer
from tunaflow_tui.widgets.terminal_pane import TerminalPane

LIMIT = 30.0


async def _ready(pilot, app: TerminalApp) -> TerminalPane:
    await until(pilot, lambda: "ready" in screen_text(app), "the stand-in's first screen", LIMIT)
    return app.query_one(TerminalPane)


async def test_keys_reach_the_program_and_its_answer_is_drawn() -> None:
    app = TerminalApp()
    async with app.run_test(size=(60, 16)) as pilot:
        pane = await _ready(pilot, app)
        await pilot.press("x", "up", "ctrl+a", "alt+x", "f5")
        sent = b"x\x1b[A\x01\x1bx\x1b[15~"
        await until(pilot, lambda: echoed(app) == sent, "the keys echoed", LIMIT)
        # what the program drew is what the pane shows
        await until(pilot, lambda: "[15~'" in "".join(
            "".join(seg.text for seg in pane.render_line(y)) for y in range(pane.size.height)), "drawn", LIMIT)


async def test_tunaflows_own_keys_go_to_the_program_while_the_pane_has_the_focus() -> None:
    app = TerminalApp()
    async with app.run_test(size=(60, 16)) as pilot:
        await _ready(pilot, app)
        await pilot.press("ctrl+g", "ctrl+p", "tab")
        await until(pilot, lambda: echoed(app) == b"\x07\x10\t", "the keys echoed", LIMIT)
        assert app.app_keys == []
        assert isinstance(app.focused, TerminalPane)


async def test_the_leave_key_gives_the_focus_back_and_the_program_runs_on() -> None:
    app = TerminalApp()
    async with app.run_test(size=(60, 16)) as pilot:
        pane = await _ready(pilot, app)
        await pilot.press("ctrl+right_square_bracket")
        await pilot.pause()
        assert isinstance(app.focused, Input)
        assert [type(m) for m in app.messages] == [TerminalPane.Left]
        assert app.session.running
        await pilot.press("ctrl+g")  # tunaflow's keys are tunaflow's again
        assert app.app_keys == ["ctrl+g"]
        pane.focus()
        await pilot.press("y")
        await until(pilot, lambda: "key: b'y'" in screen_text(app), "a key after coming back", LIMIT)


async def test_escape_goes_to_the_program_and_escape_twice_leaves() -> None:
    app = TerminalApp()
    async with app.run_test(size=(60, 16)) as pilot:
        await _ready(pilot, app)
        await pilot.press("escape")
        await until(pilot, lambda: "key: b'\\x1b'" in screen_text(app), "one escape sent", LIMIT)
        assert isinstance(app.focused, TerminalPane)
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert isinstance(app.focused, Input)
        assert app.session.running


async def test_the_program_learns_the_panes_size_and_follows_a_resize() -> None:
    app = TerminalApp()
    async with app.run_test(size=(60, 16)) as pilot:
        pane = await _ready(pilot, app)
        region = pane.scrollable_content_region
        size = f"size: {region.height}x{region.width}"
        await until(pilot, lambda: size in screen_text(app), f"the program seeing {size}", LIMIT)
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: pane.scrollable_content_region.width > region.width, "the pane resized", LIMIT)
        region = pane.scrollable_content_region
        size = f"size: {region.height}x{region.width}"
        await until(pilot, lambda: size in screen_text(app), f"the program seeing {size}", LIMIT)


async def test_when_the_program_ends_the_pane_says_so_and_takes_no_more_keys() -> None:
    app = TerminalApp()
    async with app.run_test(size=(60, 16)) as pilot:
        pane = await _ready(pilot, app)
        await pilot.press("q")
        await until(pilot, lambda: any(isinstance(m, TerminalPane.Ended) for m in app.messages), "the end", LIMIT)
        ended = next(m for m in app.messages if isinstance(m, TerminalPane.Ended))
        assert ended.exit_code == 3
        assert pane.has_class("-ended") and pane.ended
        await pilot.press("z")
        assert "key: b'z'" not in screen_text(app)


@pytest.mark.parametrize("mouse", [False, True])
async def test_the_wheel_scrolls_the_scrollback_unless_the_program_reads_the_mouse(mouse: bool) -> None:
    app = TerminalApp(env={"TTY_APP_MOUSE": "1"} if mouse else {})
    async with app.run_test(size=(60, 16)) as pilot:
        pane = await _ready(pilot, app)
        for _ in range(3):
            await pilot.press("s", "s", "s", "s", "s")
        await until(pilot, lambda: app.session.emulator.history_size > 5, "lines in the scrollback", LIMIT)
        await until(pilot, lambda: pane.max_scroll_y > 0 and pane.scroll_offset.y == pane.max_scroll_y,
                    "the view following the tail", LIMIT)
        bottom = pane.scroll_offset.y
        # the wheel over cell (5, 3) of the pane, as the driver sends it
        pane.post_message(events.MouseScrollUp(pane, 5, 3, 0, -1, 0, False, False, False))
        await pilot.pause()
        if mouse:
            await until(pilot, lambda: "key: b'\\x1b[<64;6;4M'" in screen_text(app), "the wheel reported", LIMIT)
            await until(pilot, lambda: pane.scroll_offset.y == pane.max_scroll_y, "the view still at the tail", LIMIT)
        else:
            await until(pilot, lambda: pane.scroll_offset.y < bottom, "the view scrolled up", LIMIT)
            assert "<64" not in screen_text(app)
            # what scrolled into view is the newest scrollback, right above the screen
            newest = app.session.emulator.history_text()[-1]
            await until(pilot, lambda: newest in _drawn(app), "the newest scrollback line shown", LIMIT)


@pytest.mark.parametrize("bracketed", [False, True])
async def test_a_paste_is_bracketed_when_the_program_asked(bracketed: bool) -> None:
    app = TerminalApp(env={"TTY_APP_PASTE": "1"} if bracketed else {})
    async with app.run_test(size=(60, 16)) as pilot:
        pane = await _ready(pilot, app)
        pane.post_message(events.Paste("hi"))
        expected = "key: b'\\x1b[200~hi\\x1b[201~'" if bracketed else "key: b'hi'"
        await until(pilot, lambda: expected in screen_text(app), "the paste", LIMIT)


async def test_keys_typed_elsewhere_are_handled_while_the_pane_prints_5_mb() -> None:
    """The program floods its terminal (5 MB as fast as it can): its output is parsed beside the app's
    loop, not in its turns, so the parsing goes on while the loop is busy and the loop stays free for
    the keys typed in the app's own input meanwhile."""
    app = TerminalApp()
    async with app.run_test(size=(60, 16)) as pilot:
        await _ready(pilot, app)
        field = app.query_one(Input)
        field.focus()
        emulator = app.session.emulator
        app.session.write(b"f")
        await until(pilot, lambda: emulator.bytes_fed > 64 * 1024, "the flood under way", LIMIT)
        # read ahead of the parsing (a loaded machine's loop may read no faster than the thread parses)
        await until(pilot, lambda: app.session.backlog > 48 * 1024, "48 KB read and waiting to be parsed", LIMIT)
        # the loop is held here, without a single turn: the program's output is parsed all the same
        fed = emulator.bytes_fed
        until_sync(lambda: emulator.bytes_fed > fed + 32 * 1024, "output parsed while the loop was busy", 10)
        typed = ""
        for char in "keys while it floods":
            typed += char
            field.post_message(events.Key(char, char))
            await until(pilot, lambda want=typed: field.value == want, f"{typed!r} in the input", LIMIT)
        assert field.value == "keys while it floods"
        assert emulator.bytes_fed > fed + 32 * 1024
        assert not any("flood done" in row for row in emulator.display), "the keys waited for the flood to end"


def test_snapshot_terminal_pane(snap_compare) -> None:
    """The stand-in's screen in the pane after a visit to the alternate screen: colours, echoed keys, the cursor."""

    async def drive(pilot) -> None:
        app = pilot.app
        await _ready(pilot, app)
        await pilot.press("a")
        await until(pilot, lambda: "ALT SCREEN" in screen_text(app), "the alternate screen", LIMIT)
        await pilot.press("b")
        await until(pilot, lambda: not app.session.emulator.alternate_screen, "the primary screen back", LIMIT)
        await pilot.press("x")
        await until(pilot, lambda: "key: b'x'" in screen_text(app), "a key echoed", LIMIT)
        await pilot.pause(0.1)

    # started at the pane's own size (60x16 less the input and the scrollbar): no resize, no race
    app = TerminalApp("--resume", "sess-1", lines=13, columns=59)
    assert snap_compare(app, terminal_size=(60, 16), run_before=drive)


def _drawn(app: TerminalApp) -> str:
    """What the terminal shows now (the compositor's lines)."""
    return "\n".join(strip.text for strip in screen_strips(app.screen))


@pytest.mark.parametrize("closed", [True, False])
async def test_a_synchronized_frame_is_shown_whole_or_after_the_hold_limit(closed: bool, monkeypatch) -> None:
    from tunaflow_tui.widgets import terminal_pane

    monkeypatch.setattr(terminal_pane, "SYNC_HOLD_S", 30.0 if closed else 0.2)
    app = TerminalApp()
    async with app.run_test(size=(60, 16)) as pilot:
        pane = await _ready(pilot, app)
        region = pane.scrollable_content_region
        size = f"size: {region.height}x{region.width}"
        # settled: the program saw the pane's size, and the pane drew its screen since
        await until(pilot, lambda: size in _drawn(app) and ("s", 0) in pane._strips, "the screen settled", LIMIT)
        # the program starts a frame (DEC 2026) and rewrites the first row; the pane holds the old one
        app.session.emulator.feed(b"\x1b[?2026h\x1b[1;1H\x1b[2KNEW FRAME")
        pane._output()
        await pilot.pause(0.1)
        assert "tty-app" in _drawn(app) and "NEW FRAME" not in _drawn(app)
        if closed:
            app.session.emulator.feed(b"\x1b[?2026l")
            pane._output()
        await until(pilot, lambda: "NEW FRAME" in _drawn(app), "the frame shown", LIMIT)


class ComposerApp(TerminalApp):
    """The pane above tunaflow's composer."""

    CSS = "TerminalPane { height: 1fr; } Composer { height: 3; }"

    def compose(self):
        """The pane, then the composer."""
        yield TerminalPane(self.session)
        yield Composer(cursor_blink=False)


async def _typing_in_the_composer(pilot, app: ComposerApp) -> Composer:
    """The stand-in's first screen drawn in the pane, the focus in the composer, a key typed there."""
    await until(pilot, lambda: "ready" in _drawn(app), "the stand-in's first screen drawn", LIMIT)
    composer = app.query_one(Composer)
    composer.input.focus()
    await pilot.press("h", "i")
    await until(pilot, lambda: composer.text == "hi", "the keys in the composer", LIMIT)
    return composer


def _counting_frames(monkeypatch) -> list[None]:
    """Every look the pane takes at its program (60 a second), counted."""
    looks: list[None] = []
    tick = TerminalPane._tick

    def counted(pane: TerminalPane) -> None:
        looks.append(None)
        tick(pane)

    monkeypatch.setattr(TerminalPane, "_tick", counted)
    return looks


async def test_while_keys_reach_the_composer_the_pane_draws_nothing_then_its_final_screen(monkeypatch) -> None:
    """The program floods its pane while the user types in tunaflow's composer: the pane parses all of it
    but draws no frame while the keys come; once the typing pauses it shows the program's last screen."""
    from tunaflow_tui.widgets import terminal_pane

    monkeypatch.setattr(terminal_pane, "TYPING_HOLD_S", 600.0)  # the typing has not paused, however slow the machine
    monkeypatch.setattr(terminal_pane, "TYPING_FRAME_S", 600.0)
    looks = _counting_frames(monkeypatch)
    app = ComposerApp(env={"TTY_APP_FLOOD": str(60 * 1024)})
    async with app.run_test(size=(60, 16)) as pilot:
        await _typing_in_the_composer(pilot, app)
        app.session.write(b"f")  # the program floods its terminal
        emulator = app.session.emulator
        await until(pilot, lambda: any("flood done" in row for row in emulator.display), "the flood parsed", LIMIT)
        seen = len(looks)
        await until(pilot, lambda: len(looks) > seen + 10, "ten more looks of the pane", LIMIT)
        drawn = _drawn(app)
        assert "ready" in drawn and "flood" not in drawn, "the pane drew a frame while the user typed"
        assert "hi" in drawn  # the composer's own keys are on screen
        monkeypatch.setattr(terminal_pane, "TYPING_HOLD_S", 0.0)  # the typing pauses
        await until(pilot, lambda: "flood done" in _drawn(app), "the program's last screen drawn", LIMIT)
        last = next(row for row in reversed(emulator.display) if "flood line" in row).strip()
        assert last.startswith("flood line") and last in _drawn(app)


async def test_a_long_spell_of_typing_still_lets_the_pane_move_now_and_then(monkeypatch) -> None:
    """Typing that never pauses does not freeze the pane: it draws a frame every ``TYPING_FRAME_S``."""
    from tunaflow_tui.widgets import terminal_pane

    monkeypatch.setattr(terminal_pane, "TYPING_HOLD_S", 600.0)
    app = ComposerApp()
    async with app.run_test(size=(60, 16)) as pilot:
        await _typing_in_the_composer(pilot, app)
        app.session.write(b"z")
        await until(pilot, lambda: "key: b'z'" in _drawn(app), "a frame while the typing goes on", LIMIT)


class HiddenPaneApp(TerminalApp):
    """The pane starts hidden (as the branch pane's is until it is pinned): it has no size yet."""

    CSS = "TerminalPane { height: 1fr; display: none; } Input { height: 3; }"


async def test_a_pane_that_gets_its_size_after_the_program_scrolled_shows_the_programs_last_lines() -> None:
    """The program printed more than a screenful before the pane was laid out: once shown, the pane is at
    the bottom, where the program writes, not at the top of its scrollback."""
    app = HiddenPaneApp(env={"TTY_APP_FLOOD": str(30 * 1024)})
    async with app.run_test(size=(60, 16)) as pilot:
        await until(pilot, lambda: "ready" in screen_text(app), "the stand-in's first screen", LIMIT)
        app.session.write(b"f")
        emulator = app.session.emulator
        await until(pilot, lambda: any("flood done" in row for row in emulator.display), "the flood parsed", LIMIT)
        assert emulator.history_size > 0
        pane = app.query_one(TerminalPane)
        pane.display = True
        await until(pilot, lambda: "flood done" in _drawn(app), "the program's last lines shown", LIMIT)
        assert pane.scroll_offset.y == pane.max_scroll_y


async def test_a_view_scrolled_up_stays_while_the_program_writes_and_follows_again_at_the_bottom() -> None:
    app = TerminalApp()
    async with app.run_test(size=(60, 16)) as pilot:
        pane = await _ready(pilot, app)
        emulator = app.session.emulator
        for _ in range(3):
            await pilot.press("s", "s", "s", "s", "s")
        await until(pilot, lambda: emulator.history_size > 5 and pane.max_scroll_y > 0
                    and pane.scroll_offset.y == pane.max_scroll_y, "the view following the tail", LIMIT)
        pane.post_message(events.MouseScrollUp(pane, 5, 3, 0, -1, 0, False, False, False))
        await until(pilot, lambda: pane.scroll_offset.y < pane.max_scroll_y, "the view scrolled up", LIMIT)
        where = pane.scroll_offset.y

        def more_lines_seen(count: int) -> bool:
            return pane._history_seen == emulator.history_size >= count

        count = emulator.history_size + 1
        app.session.write(b"sss")  # the program writes (not a key of the user's: those bring the view down)
        await until(pilot, lambda: more_lines_seen(count), "the new lines taken by the pane", LIMIT)
        assert pane.scroll_offset.y == where
        while pane.scroll_offset.y < pane.max_scroll_y:  # the wheel, down to the bottom
            pane.post_message(events.MouseScrollDown(pane, 5, 3, 0, 1, 0, False, False, False))
            await pilot.pause()
        count = emulator.history_size + 1
        app.session.write(b"sss")
        await until(pilot, lambda: more_lines_seen(count), "the new lines taken by the pane", LIMIT)
        await until(pilot, lambda: pane.scroll_offset.y == pane.max_scroll_y, "the view following again", LIMIT)
        assert "key: b'sss'" in _drawn(app)
