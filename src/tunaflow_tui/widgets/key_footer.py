"""KeyFooter: Textual's footer showing the keys that matter, whole, whatever the terminal's width.

Textual lists the focused widget's keys first and the app's last, and cuts the line at the right
edge, mid-word: at 80 columns quit fell off.  This footer orders the keys by what matters —

1. the ``first`` actions (help), so the way to every other key is always there;
2. the keys of what is focused (the widget, its containers and the screen), in Textual's order;
3. the ``keep`` actions (quit);
4. the command palette's key, then the app's other keys (``then`` first) —

and shows as many as fit, whole: the ``first`` and ``keep`` keys always, the others in that order
while there is room.  What does not fit is listed in help.

The footer is composed again whenever the keys change (every focus change), and only then: a
widget refreshing its bindings without changing them leaves it as it is, and changes before the
next refresh (widgets mounting, the focus moving) make one recompose, not one each.  Textual's
footer ties each key to its ``compact`` style with ``data_bind``, which registers a watcher on the footer that
keeps the key alive until ``compact`` changes — that is, forever: every recompose would leak its
keys.  This footer gives each key its style directly instead and passes a change on itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.app import ComposeResult
from textual.compose import compose
from textual.dom import DOMNode
from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Label

from tunaflow_tui.textual_compat import (
    FooterKey,
    FooterLabel,
    KeyGroup,
    drop_data_binding,
    footer_bindings_ready,
    footer_key_disabled,
    mark_footer_bindings_ready,
    pending_children,
)


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
            keys.extend(_keys(pending_children(widget)))
    return keys


def _is_palette(unit: list[Widget]) -> bool:
    return isinstance(unit[0], FooterKey) and unit[0].has_class("-command-palette")


class KeyFooter(Footer):
    """A footer that always shows the keys of ``first`` and ``keep``, and the focused widget's keys as they fit.

    Args:
        first: Action names whose keys lead the footer, e.g. ``("help",)``.
        keep: Action names whose keys follow the focused widget's and are never left out, e.g. ``("quit",)``.
        then: Action names of the app whose keys come first among the app's other keys, room permitting.
    """

    def __init__(self, *, first: Sequence[str] = (), keep: Sequence[str] = (), then: Sequence[str] = (),
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.first = tuple(first)
        self.keep = tuple(keep)
        self.then = tuple(then)
        self._ranked: list[tuple[tuple[int, int], list[Widget]]] = []
        self._awaiting_layout = False
        """Subscribed to the screen's next layout, to measure the keys then."""
        self._drawn: tuple[object, ...] | None = None
        """What the keys shown were composed from, or are about to be (see :meth:`_signature`)."""
        self._composed: tuple[object, ...] | None = None
        """What the keys shown were composed from."""
        self._fitted = False
        """The keys composed last were measured and the ones that do not fit left out."""
        self._recompose_asked = False
        """A recompose is asked for after the next refresh (see :meth:`_recompose_soon`)."""
        self._composed_width = -1
        """The footer's width when its keys were composed last (they were fitted to it)."""

    def _rank(self, unit: list[Widget], depth: dict[str, int]) -> tuple[int, int]:
        """(0.., 0) for ``first``; then the focused widget's keys (nearest widget first), ``keep``, the
        palette, and the app's other keys."""
        head = unit[0]
        after = len(self.first)
        if _is_palette(unit):
            return after + 2, 0
        keys = _keys([head])
        if isinstance(head, FooterKey):
            if head.action in self.first:
                return self.first.index(head.action), 0
            if head.action in self.keep:
                return after + 1, 0
        level = min((depth.get(key.key, 0) for key in keys), default=0)
        if level >= 0:
            return after, level
        action = keys[0].action if keys else ""
        return after + 3, self.then.index(action) if action in self.then else len(self.then)

    def _depths(self) -> dict[str, int]:
        """Key → how far its binding's owner is from the focused widget (0: the widget itself; -1: the app)."""
        screen = self.screen
        chain: list[DOMNode] = list(screen.focused.ancestors_with_self) if screen.focused is not None else [screen]
        depths: dict[str, int] = {}
        for key, active in screen.active_bindings.items():
            node = active.node
            depths[key] = -1 if node is self.app else chain.index(node) if node in chain else len(chain)
        return depths

    def _join_groups(self, widgets: list[Widget]) -> list[Widget]:
        """Put a key back into its group's keys when Textual's order split it off.

        Textual groups keys only where they are next to each other; a focused widget that binds some
        of a group's keys itself (the composer binds f6 and f7) moves those first, and the group's
        other key then showed on its own, with its own description.
        """
        if not footer_bindings_ready(self):
            return widgets
        group_of = {active.binding.action: active.binding.group for active in self.screen.active_bindings.values()
                    if active.binding.group is not None}
        joined: list[Widget] = []
        groups: dict[int, int] = {}  # id of a Binding.Group -> index of its KeyGroup in joined
        for widget in widgets:
            if isinstance(widget, KeyGroup):
                keys = _keys([widget])
                group = group_of.get(keys[0].action) if keys else None
                if group is not None:
                    groups[id(group)] = len(joined)
            elif isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                group = group_of.get(widget.action)
                if group is not None and id(group) in groups:
                    index = groups[id(group)]
                    old = joined[index]
                    assert isinstance(old, KeyGroup)
                    key = FooterKey(widget.key, widget.key_display, "", widget.action, disabled=footer_key_disabled(widget),
                                    tooltip=str(widget.tooltip or widget.description), classes="-grouped")
                    joined[index] = KeyGroup(*_keys([old]), key, classes=" ".join(old.classes))
                    continue
            joined.append(widget)
        return joined

    @staticmethod
    def _signature(screen: Screen[object]) -> tuple[object, ...]:
        """The active keys of ``screen`` as the footer shows them: where each is defined, what it does
        and says, and whether it is enabled."""
        return tuple((key, id(active.node), active.binding.action, active.binding.description,
                      active.binding.key_display, active.binding.show, active.binding.tooltip,
                      active.enabled, active.tooltip)
                     for key, active in screen.active_bindings.items())

    @property
    def shows_current_keys(self) -> bool:
        """True when the keys composed are those the screen's bindings give now (nothing to redo)."""
        return (self.is_attached and self._fitted and self._composed is not None
                and self._composed == self._signature(self.screen))

    def compose(self) -> ComposeResult:
        self._drawn = self._signature(self.screen) if footer_bindings_ready(self) else None
        self._composed = self._drawn
        self._composed_width = self.size.width
        self._fitted = False
        widgets = self._join_groups(compose(self, super().compose()))
        depths = self._depths() if footer_bindings_ready(self) else {}
        owner = self._keys_owner()
        if owner and any(depths.get(key.key) == 0 for key in _keys(widgets)):
            # only before keys of its own: a card with none left (merged, decided) names nothing
            widgets.insert(0, Label(f"{owner} ·", classes="-keys-owner", markup=False))
        for key in _keys(widgets):
            # Undo Textual's data_bind(compact=Footer.compact): its watcher would outlive the key.
            if drop_data_binding(key):
                key.set_reactive(FooterKey.compact, self.compact)
                key.set_class(self.compact, "-compact")
        # stable: keys of the same rank keep Textual's order
        self._ranked = sorted(((self._rank(unit, depths), unit) for unit in _units(widgets)),
                              key=lambda ranked: ranked[0])
        for _rank, unit in self._ranked:
            yield from unit
        if self._ranked:
            self.call_after_refresh(self._fit)
        else:
            self._fitted = True

    def _keys_owner(self) -> str:
        """What the focused widget's keys act on, when it says (``Plan 2``): the footer names it before them."""
        focused = self.screen.focused if footer_bindings_ready(self) else None
        owner = getattr(focused, "keys_owner", None)
        return str(owner()) if callable(owner) else ""

    def _always(self, rank: tuple[int, int]) -> bool:
        return rank[0] < len(self.first) or rank[0] == len(self.first) + 1

    DEFAULT_CSS = """
    KeyFooter > .-keys-owner { padding: 0 0 0 1; text-style: bold; color: $footer-key-foreground; }
    """

    def _fit(self) -> None:
        """Leave out, whole, the keys that do not fit; the ``first`` and ``keep`` keys stay."""
        ranked = [(rank, unit) for rank, unit in self._ranked if all(w.is_attached for w in unit)]
        if not ranked or not self.size.width:
            self._fitted = True
            return
        if not all(unit[0].region.width for _rank, unit in ranked):
            # not laid out yet (a screen under a dialog is laid out when it is next drawn, one hidden
            # under another screen only when it shows again): measure after the screen's next
            # layout, however long that takes
            if not self._awaiting_layout:
                self._awaiting_layout = True
                self.screen.screen_layout_refresh_signal.subscribe(self, self._fit_after_layout)
            return
        widths = self._widths([unit for _rank, unit in ranked])
        room = self.content_region.width
        shown: set[int] = set()
        for rank, unit in ranked:  # the keys that always show take their room first
            if self._always(rank):
                room -= widths[id(unit)]
                shown.add(id(unit))
        for rank, unit in ranked:
            if not self._always(rank) and widths[id(unit)] <= room:
                room -= widths[id(unit)]
                shown.add(id(unit))
        for _rank, unit in ranked:
            for widget in unit:
                widget.display = id(unit) in shown
        self._fitted = True

    def _fit_after_layout(self, screen: Screen[object]) -> None:
        """The screen was laid out: measure the keys now (once; :meth:`_fit` asks again if need be)."""
        screen.screen_layout_refresh_signal.unsubscribe(self)
        self._awaiting_layout = False
        self._fit()

    @staticmethod
    def _widths(units: list[list[Widget]]) -> dict[int, int]:
        """The columns each unit takes as laid out now (its margins included), by ``id`` of the unit."""
        widths: dict[int, int] = {}
        flow = [unit for unit in units if not _is_palette(unit)]
        for unit, after in zip(flow, [*flow[1:], None], strict=True):
            start = unit[0].region.x - unit[0].styles.margin.left
            end = (after[0].region.x - after[0].styles.margin.left if after is not None
                   else unit[-1].region.right + unit[-1].styles.margin.right)
            widths[id(unit)] = end - start
        for unit in units:
            if _is_palette(unit):  # docked on the right, outside the flow
                widths[id(unit)] = unit[0].outer_size.width
        return widths

    def on_resize(self, event: Resize) -> None:
        """Another width may fit other keys: lay them all out again and measure.

        The footer's first size arrives after its keys are composed, at the width they were composed
        at: that one changes nothing.
        """
        if self._ranked and self.is_attached and event.size.width != self._composed_width:
            self._recompose_soon()

    def _recompose_soon(self) -> None:
        """Compose the keys again after the next refresh, once however often it is asked meanwhile.

        While the app starts, the screen's bindings change several times before a refresh (widgets
        mounting, the focus moving): each change asked Textual's footer for a recompose of its own, and
        every one of them ran, all but the last composing keys already replaced.  The recompose reads
        the bindings as they are when it runs.
        """
        if not self._recompose_asked:
            self._recompose_asked = True
            self.call_after_refresh(self._recompose_now)

    async def _recompose_now(self) -> None:
        self._recompose_asked = False
        await self.recompose()

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Show the keys from the first frame on, even before the terminal reports it has the focus.

        Textual's footer waits for the app to have the focus before it shows anything; a terminal
        in a browser tab (``tunaflow serve``) gets the focus only with the first click, and until
        then the footer would stay empty.
        """
        mark_footer_bindings_ready(self)
        if not self._ranked and not screen.app.app_focus:
            if self.is_attached and screen is self.screen:
                self._recompose_soon()
            return
        signature = self._signature(screen) if screen is self.screen else None
        if self._ranked and signature is not None and signature == self._drawn:
            # the keys shown, or about to be (a widget refreshed its bindings, a message finished
            # streaming): composing the footer again would only lay out the screen once more
            return
        if not screen.app.app_focus:
            return  # as Textual's footer: the keys show again when the app has the focus
        if signature is not None and self.is_attached:
            self._drawn = signature  # what the recompose asked for now will show
            self._recompose_soon()

    def watch_compact(self, compact: bool) -> None:
        """Pass the footer's style on to its keys (what the binding did; the palette key never had one)."""
        for key in self.query(FooterKey):
            if not key.has_class("-command-palette"):
                key.compact = compact
