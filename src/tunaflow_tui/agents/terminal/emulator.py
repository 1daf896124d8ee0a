"""A VT emulator for one terminal pane: pyte 0.8.2 with what it lacks for today's agent TUIs.

pyte keeps the screen; this module adds the alternate screen (modes 1049/1047/47) with the primary
screen restored on exit, a capped scrollback fed by lines scrolling off the top, replies to cursor
position and device attribute queries written back to the program, a filter for the CSI forms pyte
misreads (:mod:`.csi_filter`), tolerance of private forms it does not know, and the mode state a pane
needs (application cursor keys, bracketed paste, mouse reporting, synchronized output).
"""

from __future__ import annotations

import codecs
import functools
import inspect
import re
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

import pyte
from pyte import modes as mo
from pyte.screens import Char, Margins, StaticDefaultDict

from tunaflow_tui.agents.terminal.csi_filter import PrivateCsiFilter

#: a cell's look: fg, bg, bold, italics, underscore, strikethrough, reverse, blink (pyte's names:
#: colours are "default", a name like "red"/"brightred"/"brown", or six hex digits)
CellAttrs = tuple[str, str, bool, bool, bool, bool, bool, bool]
#: a stretch of cells with one look; a wide character's second cell is not in the text
Run = tuple[str, CellAttrs]
Line = StaticDefaultDict[int, Char]

# private modes as pyte stores them (shifted left by 5)
_ALT_MODES = frozenset({1049 << 5, 1047 << 5, 47 << 5})
DECCKM = 1 << 5
BRACKETED_PASTE = 2004 << 5
SYNCHRONIZED_OUTPUT = 2026 << 5
MOUSE_TRACKING = frozenset({1000 << 5, 1002 << 5, 1003 << 5})
MOUSE_SGR = 1006 << 5
_DEFAULT_ATTRS: CellAttrs = ("default", "default", False, False, False, False, False, False)
# zero-width joiners and variation selectors: pyte stops drawing at them (wcwidth 0, not combining)
_ZERO_WIDTH = re.compile("[\u200b-\u200f\u2060-\u2064\ufe00-\ufe0f]")
# CSI methods that understand the private ('?') form; any other private form is ignored
_PRIVATE_AWARE = frozenset({"set_mode", "reset_mode", "erase_in_display", "erase_in_line",
                            "report_device_attributes"})


class CursorState(NamedTuple):
    """Where the cursor is on the screen (0-based) and whether the program shows it."""

    x: int
    y: int
    visible: bool


def _ignoring_private(method: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(method)
    def call(self: Any, *params: int, private: bool = False) -> None:
        if not private:
            method(self, *params)

    return call


class _Screen(pyte.Screen):
    """pyte's screen plus the alternate screen, scrollback and replies."""

    def __init__(self, columns: int, lines: int, scrollback: int, reply: Callable[[str], None]) -> None:
        self.history: deque[Line] = deque(maxlen=max(0, scrollback))
        self.scrolled_total = 0  # lines that ever went into the scrollback (numbers them for caches)
        self.alt_active = False
        self._primary: tuple[dict[int, Line], pyte.screens.Cursor] | None = None
        self._reply = reply
        super().__init__(columns, lines)

    # --- scrollback ---------------------------------------------------------------------------

    def index(self) -> None:
        """A line scrolled off the top of the primary screen goes into the scrollback."""
        top, bottom = self.margins or Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0 and not self.alt_active and self.history.maxlen:
            self._keep(self.buffer[0])
        super().index()

    def _keep(self, line: Line) -> None:
        self.history.append(line)
        self.scrolled_total += 1

    def resize(self, lines: int | None = None, columns: int | None = None) -> None:
        """Resize; when the screen gets shorter, the lines above the cursor go to the scrollback."""
        lines = lines or self.lines
        if lines < self.lines:
            drop = max(0, self.cursor.y - (lines - 1))
            kept = {y - drop: self.buffer[y] for y in range(drop, drop + lines) if y in self.buffer}
            if not self.alt_active and self.history.maxlen:
                for y in range(drop):
                    self._keep(self.buffer[y])
            self.buffer.clear()
            self.buffer.update(kept)
            self.cursor.y -= drop
            self.lines = lines
            self.dirty.update(range(lines))
        super().resize(lines, columns)
        self.set_margins()

    def scroll_up(self, count: int | None = None, private: bool = False) -> None:
        """SU: the scrolling region moves up ``count`` lines (the top ones go to the scrollback)."""
        if private:
            return
        _top, bottom = self.margins or Margins(0, self.lines - 1)
        saved = self.cursor.y
        self.cursor.y = bottom
        for _ in range(max(1, count or 1)):
            self.index()
        self.cursor.y = saved

    def scroll_down(self, count: int | None = None, private: bool = False) -> None:
        """SD: the scrolling region moves down ``count`` lines."""
        if private:
            return
        top, _bottom = self.margins or Margins(0, self.lines - 1)
        saved = self.cursor.y
        self.cursor.y = top
        for _ in range(max(1, count or 1)):
            self.reverse_index()
        self.cursor.y = saved

    # --- alternate screen ---------------------------------------------------------------------

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        """Set modes; entering the alternate screen keeps the primary one (and its cursor for 1049)."""
        if kwargs.get("private") and not self.alt_active and {m << 5 for m in modes} & _ALT_MODES:
            saved = pyte.screens.Cursor(self.cursor.x, self.cursor.y, self.cursor.attrs)
            saved.hidden = self.cursor.hidden
            self._primary = (dict(self.buffer), saved)
            self.buffer.clear()
            self.alt_active = True
            self.dirty.update(range(self.lines))
        super().set_mode(*modes, **kwargs)

    def reset_mode(self, *modes: int, **kwargs: Any) -> None:
        """Reset modes; leaving the alternate screen brings the primary one back."""
        super().reset_mode(*modes, **kwargs)
        if kwargs.get("private") and self.alt_active and {m << 5 for m in modes} & _ALT_MODES:
            self.mode.difference_update(_ALT_MODES)
            self.alt_active = False
            self.buffer.clear()
            if self._primary is not None:
                buffer, saved = self._primary
                self.buffer.update(buffer)
                if 1049 in modes:
                    self.cursor.x = min(saved.x, self.columns - 1)
                    self.cursor.y = min(saved.y, self.lines - 1)
                    self.cursor.attrs = saved.attrs
                self._primary = None
            self.dirty.update(range(self.lines))

    def reset(self) -> None:
        """A full reset (RIS) also leaves the alternate screen."""
        self.alt_active = False
        self._primary = None
        super().reset()

    # --- what pyte gets wrong -----------------------------------------------------------------

    def draw(self, data: str) -> None:
        """Draw text; zero-width joiners and variation selectors are dropped (pyte stops at them).

        Plain ASCII in the default charset and replace mode (nearly all of an agent's output) takes a
        fast path: one cell per character, a line's worth at a time, each cell built directly instead
        of pyte's ``_replace`` per character (which was about 40 % of parsing a coloured flood).
        """
        if not data.isascii():
            super().draw(_ZERO_WIDTH.sub("", data))
            return
        if self.charset or mo.IRM in self.mode or not data.isprintable():
            super().draw(data)
            return
        cursor = self.cursor
        rest = tuple(cursor.attrs)[1:]
        new = tuple.__new__
        autowrap = mo.DECAWM in self.mode
        columns = self.columns
        start = 0
        while start < len(data):
            if cursor.x >= columns:
                if autowrap:
                    self.dirty.add(cursor.y)
                    self.carriage_return()
                    self.linefeed()
                else:
                    cursor.x = columns - 1
            room = columns - cursor.x if autowrap else len(data) - start
            piece = data[start:start + room]
            line = self.buffer[cursor.y]
            x = cursor.x
            for offset, char in enumerate(piece):
                line[min(x + offset, columns - 1)] = new(Char, (char, *rest))
            cursor.x = min(x + len(piece), columns)
            start += len(piece)
        self.dirty.add(cursor.y)

    def select_graphic_rendition(self, *attrs: int, **kwargs: Any) -> None:
        """SGR; a private form (``CSI ? … m``) is ignored instead of crashing pyte."""
        if not kwargs.get("private"):
            super().select_graphic_rendition(*attrs)

    def write_process_input(self, data: str) -> None:
        """Replies to the program's queries (cursor position, device attributes) go back to it."""
        self._reply(data)

    def debug(self, *args: Any, **kwargs: Any) -> None:
        """Sequences pyte does not know are ignored."""


for _name in set(pyte.Stream.csi.values()) - _PRIVATE_AWARE - {"select_graphic_rendition"}:
    _method = getattr(_Screen, _name)
    if "kwargs" not in inspect.signature(_method).parameters and "private" not in inspect.signature(
            _method).parameters:
        setattr(_Screen, _name, _ignoring_private(_method))


class _Stream(pyte.Stream):
    """pyte's stream plus scroll up/down (``CSI n S`` / ``CSI n T``)."""

    csi = {**pyte.Stream.csi, "S": "scroll_up", "T": "scroll_down"}  # noqa: RUF012 (pyte reads it per class)


def _runs(line: Line, columns: int) -> list[Run]:
    runs: list[Run] = []
    text: list[str] = []
    current: CellAttrs | None = None
    get = line.get
    default = line.default
    for x in range(columns):
        char = get(x, default)
        data = char[0]
        if data == "":
            continue  # the second cell of a wide character
        attrs: CellAttrs = char[1:]  # fg, bg, bold, italics, underscore, strikethrough, reverse, blink
        if attrs != current:
            if text and current is not None:
                runs.append(("".join(text), current))
            text = []
            current = attrs
        text.append(data)
    if text and current is not None:
        runs.append(("".join(text), current))
    return runs


class Emulator:
    """One terminal's state, fed with the bytes a program writes to its PTY.

    Thread-safe: feeding, resizing and every look at the screen hold :attr:`lock`; a reader that needs
    several looks to agree (dirty rows, their contents and the cursor of one frame) holds it around them.

    Args:
        columns: Screen width in cells.
        lines: Screen height in rows.
        scrollback: How many lines scrolled off the top are kept (older ones are dropped).
        reply: Where answers to the program's queries go (its PTY); bytes.
    """

    def __init__(self, columns: int, lines: int, *, scrollback: int = 10_000,
                 reply: Callable[[bytes], None] | None = None) -> None:
        self._reply = reply
        self._screen = _Screen(columns, lines, scrollback, self._answer)
        self._stream = _Stream(self._screen)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._filter = PrivateCsiFilter()
        self.lock = threading.RLock()
        self.bytes_fed = 0

    def _answer(self, text: str) -> None:
        if self._reply is not None:
            self._reply(text.encode())

    def feed(self, data: bytes) -> None:
        """Parse what the program wrote (any split: UTF-8 and escape sequences may straddle calls)."""
        with self.lock:
            self.bytes_fed += len(data)
            text = self._filter.feed(self._decoder.decode(data))
            if text:
                self._stream.feed(text)

    # --- what the pane draws ------------------------------------------------------------------

    @property
    def columns(self) -> int:
        """Screen width in cells."""
        return int(self._screen.columns)

    @property
    def lines(self) -> int:
        """Screen height in rows."""
        return int(self._screen.lines)

    def take_dirty(self) -> set[int]:
        """The screen rows changed since the last call (and forget them)."""
        with self.lock:
            dirty = {y for y in self._screen.dirty if y < self._screen.lines}
            self._screen.dirty.clear()
            return dirty

    def row(self, y: int) -> list[Run]:
        """Screen row ``y`` as runs of cells with one look."""
        with self.lock:
            buffer = self._screen.buffer
            return _runs(buffer[y], self._screen.columns) if y in buffer else \
                [(" " * self._screen.columns, _DEFAULT_ATTRS)]

    @property
    def history_size(self) -> int:
        """Lines in the scrollback now."""
        return len(self._screen.history)

    @property
    def scrollback_cap(self) -> int:
        """How many scrollback lines are kept at most."""
        return self._screen.history.maxlen or 0

    @property
    def scrolled_total(self) -> int:
        """Lines that ever scrolled into the scrollback (the first kept one is number ``total - size``)."""
        return self._screen.scrolled_total

    def history_row(self, index: int) -> list[Run]:
        """Scrollback line ``index`` (0 = the oldest kept) as runs."""
        with self.lock:
            return _runs(self._screen.history[index], self._screen.columns)

    def history_text(self) -> list[str]:
        """The scrollback as plain text, oldest first (trailing blanks removed)."""
        with self.lock:
            return ["".join(text for text, _ in _runs(line, self._screen.columns)).rstrip()
                    for line in self._screen.history]

    @property
    def display(self) -> list[str]:
        """The screen as plain text, one string per row."""
        with self.lock:
            return ["".join(text for text, _ in self.row(y)) for y in range(self._screen.lines)]

    @property
    def cursor(self) -> CursorState:
        """The cursor's place and visibility."""
        with self.lock:
            cursor = self._screen.cursor
            return CursorState(min(cursor.x, self._screen.columns - 1), cursor.y, not cursor.hidden)

    @property
    def title(self) -> str:
        """The window title the program set (OSC 0/2)."""
        return str(self._screen.title)

    # --- modes --------------------------------------------------------------------------------

    @property
    def alternate_screen(self) -> bool:
        """Whether the program is on the alternate screen (full-screen TUIs)."""
        return self._screen.alt_active

    @property
    def application_cursor_keys(self) -> bool:
        """DECCKM: arrow keys are sent as ``ESC O x`` instead of ``ESC [ x``."""
        return DECCKM in self._screen.mode

    @property
    def bracketed_paste(self) -> bool:
        """Whether the program asked for pasted text to be wrapped in ``ESC[200~`` … ``ESC[201~``."""
        return BRACKETED_PASTE in self._screen.mode

    @property
    def mouse_reporting(self) -> bool:
        """Whether the program asked for mouse events (modes 1000/1002/1003)."""
        return bool(MOUSE_TRACKING & self._screen.mode)

    @property
    def mouse_sgr(self) -> bool:
        """Whether mouse events are to be sent in SGR form (mode 1006)."""
        return MOUSE_SGR in self._screen.mode

    @property
    def synchronized_output(self) -> bool:
        """DEC 2026: the program is drawing a frame and asks that it be shown only when done."""
        return SYNCHRONIZED_OUTPUT in self._screen.mode

    def resize(self, lines: int, columns: int) -> None:
        """Change the screen size (the program is told separately, through its PTY)."""
        with self.lock:
            self._screen.resize(max(1, lines), max(1, columns))
