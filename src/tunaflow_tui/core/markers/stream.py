"""MarkerStream: show an agent's reply while it streams, without ever showing a marker.

Each ``feed(chunk)`` returns the text that is now safe to display: every well-formed marker comment
is dropped and only a possible marker prefix (``<!-- tunafl…``) is held back until it is decided.
The stream itself does not interpret markers: state changes come from ``result()``, which parses the
finished message (``finish()`` first), or, for progress while the message streams (a subtask ticked),
from parsing :attr:`text` whenever :attr:`markers_seen` grows. The preview keeps block contents as
plain text; once the message is finished, a view should switch to ``result().display_text`` and the
markers' cards.
"""

from __future__ import annotations

from tunaflow_tui.core.markers.marker_model import ParseResult
from tunaflow_tui.core.markers.parser import parse_markers
from tunaflow_tui.core.markers.scanner import MAX_COMMENT_BODY, classify

_PREFIXES = ("tunaflow:", "/tunaflow:")
_WINDOW = 4 + MAX_COMMENT_BODY + 3


def _may_become_marker(compact: str) -> bool:
    """True if a comment body read so far may still turn out to name tunaflow."""
    return any(compact.startswith(p) or p.startswith(compact) for p in _PREFIXES)


class MarkerStream:
    """Incremental display filter for one streamed message (see the module docstring)."""

    def __init__(self, role: str | None = None) -> None:
        """``role`` is the writer's role, used by :meth:`result` for role scoping."""
        self._role = role
        self._parts: list[str] = []
        self._pending = ""
        self._finished = False
        self._result: ParseResult | None = None
        self._seen = 0

    @property
    def text(self) -> str:
        """Everything fed so far, unfiltered."""
        return "".join(self._parts)

    @property
    def markers_seen(self) -> int:
        """How many marker comments were dropped from the display so far (they are not validated here)."""
        return self._seen

    @property
    def finished(self) -> bool:
        """True once :meth:`finish` was called."""
        return self._finished

    def feed(self, chunk: str) -> str:
        """Add a chunk; return the newly displayable text (possibly empty). Ignored after finish."""
        if self._finished or not chunk:
            return ""
        self._parts.append(chunk)
        self._pending += chunk
        return self._drain(final=False)

    def finish(self) -> str:
        """End the message; return the held-back text that is now decided."""
        if self._finished:
            return ""
        self._finished = True
        return self._drain(final=True)

    def result(self) -> ParseResult | None:
        """The parsed finished message, or None while it is still streaming."""
        if not self._finished:
            return None
        if self._result is None:
            self._result = parse_markers(self.text, self._role)
        return self._result

    def _drain(self, final: bool) -> str:
        buf = self._pending
        out: list[str] = []
        pos = search = 0
        hold = len(buf)
        while True:
            i = buf.find("<!--", search)
            if i == -1:
                break
            j = buf.find("-->", i + 4, i + _WINDOW)
            if j != -1:
                compact = "".join(buf[i + 4 : j].split()).casefold()
                if compact.startswith(_PREFIXES):
                    if classify(compact) is not None:
                        out.append(buf[pos:i])
                        pos = j + 3
                        self._seen += 1
                    search = j + 3
                else:
                    search = i + 1
                continue
            if final or len(buf) >= i + _WINDOW:
                search = i + 1
                continue
            if _may_become_marker("".join(buf[i + 4 :].split()).casefold()):
                hold = i
                break
            search = i + 1
        if hold == len(buf) and not final:
            for prefix in ("<!-", "<!", "<"):
                if buf.endswith(prefix) and len(buf) - len(prefix) >= pos:
                    hold = len(buf) - len(prefix)
                    break
        hold = max(hold, pos)
        out.append(buf[pos:hold])
        self._pending = buf[hold:]
        return "".join(out)
