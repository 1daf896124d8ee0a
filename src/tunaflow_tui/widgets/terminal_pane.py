"""TerminalPane: a live program (a native agent CLI) drawn from its VT emulator, keys sent to it.

The program's output is parsed off the loop (:mod:`tunaflow_tui.agents.terminal.pty_session`); at most
60 times a second the pane takes a frame: under the emulator's lock, the rows the program changed
since the last one (their runs of cells) and the cursor, in one short hold. Only those rows are
redrawn, from Strips cached by their content (lines that scrolled up are drawn once, not once per
row they pass through). However much arrived between two frames, only the last screen is drawn; while
the text scrolls, at most 30 times a second, and 5 times while more than a screenful arrives a frame. A frame the program marks as synchronized (DEC
2026) is held until it is complete, 100 ms at most. Above the screen, the scrollback (not on the
alternate screen).

The user's typing wins over the pane: while keys reach a composer elsewhere in the app, the pane draws
no frame (one a second at most if the typing never pauses) and its program's output is parsed more
slowly, so a key is never drawn behind a frame of a flooding pane; once the typing pauses, the pane
draws the program's latest screen. Frames are dropped, never output.

Focused, the pane takes every key (Textual's and tunaflow's own bindings included) and sends it to the
program, except the leave key (``terminal.leave``, ctrl+] by default) and Escape pressed twice within
400 ms, which give the focus back to tunaflow and leave the program running. The mouse wheel scrolls
the scrollback unless the program asked for mouse reports. When the program ends the pane stays, read-only.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from tunaflow_tui.agents.terminal.emulator import CellAttrs, CursorState, Run
from tunaflow_tui.agents.terminal.keys import key_bytes, mouse_bytes, paste_bytes
from tunaflow_tui.agents.terminal.pty_session import PtySession
from tunaflow_tui.textual_compat import declared_bindings
from tunaflow_tui.widgets.stream_clock import StreamClock

REFRESH_HZ = 60
SCROLL_HZ = 30
FLOOD_HZ = 5
DOUBLE_ESCAPE_S = 0.4
SYNC_HOLD_S = 0.1
RESIZE_DEBOUNCE_S = 0.05
TYPING_HOLD_S = 0.2
"""While keys reach a composer elsewhere in the app (the last one less than this many seconds ago), the
pane draws no frame; it draws the program's latest screen once the typing pauses."""
TYPING_FRAME_S = 1.0
"""While the typing goes on without a pause, the pane still draws a frame this often (seconds)."""
_CACHE_CAP = 4096
_CURSOR = Style(reverse=True)


def _colour(name: str) -> str | None:
    if name == "default":
        return None
    if len(name) == 6 and all(c in "0123456789abcdefABCDEF" for c in name):
        return "#" + name
    name = name.replace("bfight", "bright")  # pyte's spelling of bright magenta backgrounds
    if name.startswith("bright"):
        name = "bright_" + name[len("bright"):]
    return name.replace("brown", "yellow")


@lru_cache(maxsize=1024)
def cell_style(attrs: CellAttrs) -> Style:
    """The Rich style of cells that look like ``attrs`` (pyte's colour names mapped to Rich's)."""
    fg, bg, bold, italics, underscore, strikethrough, reverse, blink = attrs
    return Style(color=_colour(fg), bgcolor=_colour(bg), bold=bold or None, italic=italics or None,
                 underline=underscore or None, strike=strikethrough or None, reverse=reverse or None,
                 blink=blink or None)


def runs_strip(runs: list[Run]) -> Strip:
    """One row as a Strip (its width counted without Rich's per-character lookups for ASCII text)."""
    width = sum(len(text) if text.isascii() else cell_len(text) for text, _ in runs)
    return Strip([Segment(text, cell_style(attrs)) for text, attrs in runs], width)


class TerminalPane(ScrollView, can_focus=True):
    """A live program's terminal. Post :class:`Left` when the user takes the focus back, :class:`Ended`
    when the program is gone."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+right_square_bracket", "leave", "Back to tunaflow", id="terminal.leave", priority=True),
    ]
    DEFAULT_CSS = """
    TerminalPane { background: $background; overflow-x: hidden; overflow-y: scroll; scrollbar-size-vertical: 1; }
    TerminalPane.-ended { opacity: 0.8; }
    """

    class Left(Message):
        """The user gave the focus back to tunaflow; the program runs on."""

        def __init__(self, pane: TerminalPane) -> None:
            super().__init__()
            self.pane = pane

    class Ended(Message):
        """The program ended (exit code, negative for a signal); the pane is read-only."""

        def __init__(self, pane: TerminalPane, exit_code: int | None) -> None:
            super().__init__()
            self.pane = pane
            self.exit_code = exit_code

    def __init__(self, session: PtySession, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.session = session
        self._changed = True
        self._strips: dict[tuple[str, int], Strip] = {}
        self._looks: dict[tuple[tuple[Run, ...], int, Style], Strip] = {}  # (runs, width, style) → drawn row
        self._history_seen = -1
        self._scrolled_seen = 0
        self._cursor = CursorState(0, 0, False)  # the cursor of the frame on screen
        self._room = 0  # rows above the screen (see _room_for)
        self._alt_seen = False
        self._cursor_row: int | None = None
        self._sync_since: float | None = None
        self._last_escape = 0.0
        self._resize_timer: Timer | None = None
        self._ended_seen = False
        self._base_style: Style | None = None  # the widget's own style, looked up once a frame
        self._last_layout = 0.0
        self._framed_at = 0.0
        self._follow = True  # the view keeps to the bottom (where the program writes) until the user scrolls up
        session.on_output = self._output

    # --- life ---------------------------------------------------------------------------------

    def on_mount(self) -> None:
        """Follow the program at up to 60 frames a second."""
        self.set_interval(1 / REFRESH_HZ, self._tick)
        self._sync_layout()

    def _output(self) -> None:
        self._changed = True

    @property
    def ended(self) -> bool:
        """Whether the program has ended (the pane is read-only then)."""
        return self.session.ended

    def _history(self) -> int:
        emulator = self.session.emulator
        return 0 if emulator.alternate_screen else emulator.history_size

    def _room_for(self, history: int, flooding: bool = False) -> int:
        """Rows kept above the screen for ``history`` scrollback lines: the next power of two from 256, at
        most the cap, and the cap at once while a flood scrolls more than a screenful a frame. Changing the
        scroll height lays out the whole app, so it changes a few times while the scrollback fills, not on
        every line, and it does not shrink back (the unused rows at the very top are blank)."""
        cap = self.session.emulator.scrollback_cap
        if history <= 0 or cap <= 0:
            return 0
        if flooding:
            return cap
        room = 256
        while room < history:
            room *= 2
        return max(min(room, cap), self._room)

    def _sync_layout(self, flooding: bool = False) -> None:
        """The scroll height follows the scrollback; a view at the bottom stays at the bottom."""
        emulator = self.session.emulator
        with emulator.lock:
            history = self._history()
            self._history_seen = history
            self._scrolled_seen = emulator.scrolled_total
            self._alt_seen = emulator.alternate_screen
            self._cursor = emulator.cursor
            self._room = self._room_for(history, flooding)
            size = Size(emulator.columns, self._room + emulator.lines)
        if size != self.virtual_size:
            self.virtual_size = size
        if self._follow:
            self.scroll_to(y=max(0, size.height - self.scrollable_content_region.height), animate=False,
                           immediate=True)
        self.refresh()

    def _tick(self) -> None:
        if self.session.ended and not self._ended_seen:
            self._ended_seen = True
            self.add_class("-ended")
            self._changed = True
            self.post_message(self.Ended(self, self.session.exit_code))
        if not self._changed:
            return
        if not self.has_focus and StreamClock.of(self.app).typed_within(TYPING_HOLD_S):
            # the user's keys first: a key never waits behind a frame of the pane, and parsing rests more often
            self.session.give_way(TYPING_HOLD_S)
            if time.monotonic() - self._framed_at < TYPING_FRAME_S:
                return
        emulator = self.session.emulator
        with emulator.lock:  # one frame: the parsing thread waits for the few rows taken here
            if emulator.synchronized_output:
                now = time.monotonic()
                if self._sync_since is None:
                    self._sync_since = now
                if now - self._sync_since < SYNC_HOLD_S:
                    return  # the program is mid-frame
            self._sync_since = None
            relayout = self._history() != self._history_seen or emulator.alternate_screen != self._alt_seen
            scrolled = emulator.scrolled_total - self._scrolled_seen
            if relayout or scrolled:
                # the text moved up: every row is redrawn, at most SCROLL_HZ times a second, and FLOOD_HZ while
                # more than a screenful arrives between two frames (nobody reads that; drawing the whole pane
                # costs the loop what keys and the rest of the app need)
                now = time.monotonic()
                hz = FLOOD_HZ if scrolled >= emulator.lines else SCROLL_HZ
                if now - self._last_layout < 1 / hz:
                    return
                self._last_layout = now
            self._changed = False  # output parsed from here on is the next frame's
            self._framed_at = time.monotonic()
            self._scrolled_seen = emulator.scrolled_total
            dirty = set(range(emulator.lines)) if relayout else emulator.take_dirty()
            if relayout:
                emulator.take_dirty()
            cursor = emulator.cursor
            dirty.add(cursor.y)
            if self._cursor_row is not None:
                dirty.add(self._cursor_row)
            rows = {y: emulator.row(y) for y in dirty if y < emulator.lines}
            if relayout:
                self._strips = {k: v for k, v in self._strips.items() if k[0] == "h"}
                self._sync_layout(flooding=scrolled >= emulator.lines)
        self._cursor = cursor
        self._base_style = None
        for y, runs in rows.items():
            self._strips[("s", y)] = self._look(runs)
        if not relayout:
            for y in rows:
                self.refresh_line(self._room + y)

    # --- drawing ------------------------------------------------------------------------------

    def _look(self, runs: list[Run]) -> Strip:
        """A row drawn at the pane's width in its own style; the same content is drawn once."""
        width = self.scrollable_content_region.width
        if self._base_style is None:
            self._base_style = self.rich_style
        key = (tuple(runs), width, self._base_style)
        strip = self._looks.get(key)
        if strip is None:
            if len(self._looks) > _CACHE_CAP:
                self._looks.clear()
            strip = self._looks[key] = runs_strip(runs).adjust_cell_length(width).apply_style(self._base_style)
        return strip

    def render_line(self, y: int) -> Strip:
        """Row ``y`` of the view: a scrollback line or a screen row, with the cursor when focused."""
        emulator = self.session.emulator
        width = self.scrollable_content_region.width
        line = self.scroll_offset.y + y
        blank_above = self._room - min(max(self._history_seen, 0), self._room)
        strip: Strip | None
        if line < blank_above:
            strip = Strip.blank(width, self.rich_style)
        elif line < self._room:
            strip = self._history_line(line - blank_above)
        elif line - self._room < emulator.lines:
            row = line - self._room
            key = ("s", row)
            strip = self._strips.get(key)
            if strip is None or strip.cell_length != width:  # drawn before the pane had its size
                strip = self._strips[key] = self._look(emulator.row(row))
            cursor = self._cursor
            if row == cursor.y:
                self._cursor_row = row
                if self.has_focus and cursor.visible and not self.session.ended and cursor.x < strip.cell_length:
                    before, at, after = strip.divide([cursor.x, cursor.x + 1, strip.cell_length])
                    strip = Strip.join([before, at.apply_style(_CURSOR), after])
        else:
            strip = Strip.blank(width, self.rich_style)
        return strip

    def _history_line(self, shown: int) -> Strip:
        """The ``shown``-th of the scrollback lines kept above the screen (the newest next to it)."""
        emulator = self.session.emulator
        with emulator.lock:  # the parsing thread may be adding lines: the index and the line must agree
            index = emulator.history_size - min(max(self._history_seen, 0), self._room) + shown
            if not 0 <= index < emulator.history_size:
                return Strip.blank(self.scrollable_content_region.width, self.rich_style)
            number = emulator.scrolled_total - emulator.history_size + index
            key = ("h", number)
            strip = self._strips.get(key)
            if strip is None or strip.cell_length != self.scrollable_content_region.width:
                if len(self._strips) > _CACHE_CAP:
                    self._strips.clear()
                strip = self._strips[key] = self._look(emulator.history_row(index))
        return strip

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolled to the bottom, the view follows the program; scrolled up, it stays where the user put it.

        Kept as a state rather than read from the geometry at each frame: before the pane has its size
        (hidden, not laid out yet) every offset looks short of the bottom, and a flood arriving then left
        the view at the top of the scrollback for good.
        """
        super().watch_scroll_y(old_value, new_value)
        self._follow = round(new_value) >= self.max_scroll_y

    def on_focus(self) -> None:
        """Show the cursor."""
        self._changed = True

    def on_blur(self) -> None:
        """Hide the cursor."""
        self._changed = True

    # --- size ---------------------------------------------------------------------------------

    def on_resize(self, _event: events.Resize) -> None:
        """Tell the program its new size once the pane has stopped changing size (50 ms)."""
        if self._resize_timer is not None:
            self._resize_timer.stop()
        self._resize_timer = self.set_timer(RESIZE_DEBOUNCE_S, self._apply_size)

    def _apply_size(self) -> None:
        region = self.scrollable_content_region
        if region.width > 0 and region.height > 0 and not self.session.ended:
            self.session.resize(region.height, region.width)
            self._strips.clear()
            self._looks.clear()
            self._sync_layout()

    # --- input --------------------------------------------------------------------------------

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """Every key is the program's, except the ones bound to leaving the pane."""
        leave = declared_bindings(self)
        return not any(binding.action == "leave" for binding in leave.get(key, ()))

    def action_leave(self) -> None:
        """Give the focus back to tunaflow; the program keeps running."""
        self.blur()
        self.post_message(self.Left(self))

    def _send(self, data: bytes | None) -> None:
        if data and not self.session.ended:
            self.session.write(data)
            if self.scroll_offset.y < self.max_scroll_y:
                self.scroll_end(animate=False, immediate=True)

    def on_key(self, event: events.Key) -> None:
        """Send the key to the program; Escape twice quickly leaves the pane instead."""
        event.stop()
        event.prevent_default()
        if event.key == "escape":
            now = time.monotonic()
            if now - self._last_escape < DOUBLE_ESCAPE_S:
                self._last_escape = 0.0
                self.action_leave()
                return
            self._last_escape = now
        emulator = self.session.emulator
        self._send(key_bytes(event.key, event.character, application_cursor=emulator.application_cursor_keys))

    def on_paste(self, event: events.Paste) -> None:
        """Paste into the program (bracketed if it asked)."""
        event.stop()
        self._send(paste_bytes(event.text, bracketed=self.session.emulator.bracketed_paste))

    def _mouse(self, event: events.MouseEvent, button: int, pressed: bool) -> bool:
        emulator = self.session.emulator
        if not emulator.mouse_reporting or self.session.ended:
            return False
        event.stop()
        event.prevent_default()
        self.session.write(mouse_bytes(button, event.x, event.y, pressed=pressed, shift=event.shift,
                                       alt=event.meta, ctrl=event.ctrl))
        return True

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        """The wheel goes to a program that reads the mouse; otherwise it scrolls the scrollback."""
        self._mouse(event, 64, True)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        """The wheel goes to a program that reads the mouse; otherwise it scrolls the scrollback."""
        self._mouse(event, 65, True)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A click goes to a program that reads the mouse."""
        self._mouse(event, min(event.button - 1, 2) if event.button else 0, True)

    def on_mouse_up(self, event: events.MouseUp) -> None:
        """A release goes to a program that reads the mouse."""
        self._mouse(event, min(event.button - 1, 2) if event.button else 0, False)
