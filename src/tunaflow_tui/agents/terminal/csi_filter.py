"""Drop the CSI forms pyte misreads before they reach it.

pyte 0.8.2 treats ``CSI > 4;2 m`` (xterm's modifyOtherKeys) as SGR underline, and prints ``CSI < u``
and ``CSI = 1;1 u`` (the kitty keyboard protocol) as text; colon-separated parameters (``CSI 4:3 m``)
break its parser the same way. Those sequences ask the terminal for things it may ignore, so they are
removed. A sequence split across two reads is held back until its end arrives.
"""

from __future__ import annotations

import re

# a complete CSI sequence with a private '<', '>' or '=' lead, or with colon parameters
_DROPPED = re.compile(r"\x1b\[(?:[<>=][0-9;:]*|[0-9;?]*:[0-9;:]*)[ -/]*[@-~]")
# the start of a sequence that may still turn out to be one of the above
_OPEN_TAIL = re.compile(r"\x1b(?:\[[<>=?0-9;:]*[ -/]*)?\Z")
_MAX_HELD = 64  # a "sequence" longer than this is not one: let it through


class PrivateCsiFilter:
    """Removes the CSI forms pyte cannot parse from a text stream fed in pieces."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        """The text with those sequences removed; an unfinished escape at the end is kept for the next call."""
        text = self._held + text
        self._held = ""
        tail = _OPEN_TAIL.search(text)
        if tail is not None and len(text) - tail.start() <= _MAX_HELD:
            self._held = text[tail.start():]
            text = text[: tail.start()]
        if "\x1b[" not in text:
            return text
        return _DROPPED.sub("", text)

    def flush(self) -> str:
        """Whatever is held back (at the end of the stream)."""
        held, self._held = self._held, ""
        return held
