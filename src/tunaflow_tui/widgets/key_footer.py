"""KeyFooter: Textual's footer with the keys that matter most first, so a narrow terminal still shows them.

Textual lists the focused widget's keys first and the app's last; at 80 columns the app's keys
(decision, workflow, cancel) fall off the right edge.  This footer moves the named actions to the
front and keeps everything else in Textual's order.

The footer is composed again whenever the keys change (every focus change).  Textual's footer ties
each key to its ``compact`` style with ``data_bind``, which registers a watcher on the footer that
keeps the key alive until ``compact`` changes — that is, forever: every recompose would leak its
keys.  This footer gives each key its style directly instead and passes a change on itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.app import ComposeResult
from textual.compose import compose
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup


def _units(widgets: Iterable[Widget]) -> list[list[Widget]]:
    """Footer items as they must stay together: a key group and the label after it are one unit."""
    units: list[list[Widget]] = []
    for widget in widgets:
        if isinstance(widget, FooterLabel) and units and isinstance(units[-1][-1], KeyGroup):
            units[-1].append(widget)
        else:
            units.append([widget])
    return units


def _keys(widgets: Iterable[Widget]) -> list[FooterKey]:
    """The keys among ``widgets`` and inside their key groups (not mounted yet)."""
    keys: list[FooterKey] = []
    for widget in widgets:
        if isinstance(widget, FooterKey):
            keys.append(widget)
        elif isinstance(widget, KeyGroup):
            keys.extend(_keys(widget._pending_children))
    return keys


class KeyFooter(Footer):
    """A footer that shows the bindings for ``first`` (action names, in that order) before all others.

    Args:
        first: Action names, e.g. ``("help", "jump_decision")``; their keys lead the footer.
    """

    def __init__(self, *, first: Sequence[str] = (), id: str | None = None) -> None:
        super().__init__(id=id)
        self.first = tuple(first)

    def _rank(self, unit: list[Widget]) -> int:
        head = unit[0]
        if isinstance(head, FooterKey) and head.action in self.first and not head.has_class("-command-palette"):
            return self.first.index(head.action)
        return len(self.first)

    def compose(self) -> ComposeResult:
        widgets = compose(self, super().compose())
        for key in _keys(widgets):
            if key._reactive_connect:
                # Undo Textual's data_bind(compact=Footer.compact): its watcher would outlive the key.
                key._reactive_connect = None
                key.set_reactive(FooterKey.compact, self.compact)
                key.set_class(self.compact, "-compact")
        for unit in sorted(_units(widgets), key=self._rank):  # stable: the rest keeps Textual's order
            yield from unit

    def watch_compact(self, compact: bool) -> None:
        """Pass the footer's style on to its keys (what the binding did; the palette key never had one)."""
        for key in self.query(FooterKey):
            if not key.has_class("-command-palette"):
                key.compact = compact
