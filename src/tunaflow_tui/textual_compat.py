"""Every use of Textual's private API, in one module, checked against the Textual versions named here.

Textual keeps some of what tunaflow needs out of its public API: the footer's key widgets, the toast
rack, the styles cache, the stylesheet's parse, the screen's compositor and its selection state, the
app's driver and its batch updates.  Each use goes through a function below whose docstring says
what it reaches and why; nothing else in the package (or its tests) touches a name of Textual's
that starts with ``_``.

A Textual release may rename or drop any of these without notice.  :data:`TEXTUAL_CHECKED` is the
version they were read against, :data:`TEXTUAL_RANGE` the versions the package accepts (the pin in
``pyproject.toml`` agrees with it), and :data:`PRIVATE_NAMES` lists every private name used here:
``tests/test_textual_compat.py`` fails, naming this module, when the installed Textual is outside
the range or lacks one of those names.  To move to another Textual: read each function against the
new version, update the range and the pin, run that test and the UI tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from textual._styles_cache import StylesCache
from textual.cache import LRUCache
from textual.css.stylesheet import Stylesheet
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup
from textual.widgets._toast import Toast, ToastRack

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.app import App
    from textual.binding import Binding
    from textual.css.model import RuleSet
    from textual.css.styles import RenderStyles
    from textual.css.types import CSSLocation
    from textual.dom import DOMNode
    from textual.events import MouseEvent
    from textual.message import Message
    from textual.notifications import Notifications
    from textual.pilot import Pilot
    from textual.screen import Screen
    from textual.strip import Strip
    from textual.widget import Widget
    from textual.widgets import Footer

__all__ = [
    "PRIVATE_NAMES",
    "TEXTUAL_CHECKED",
    "TEXTUAL_RANGE",
    "FooterKey",
    "FooterLabel",
    "KeyGroup",
    "StylesCache",
    "Toast",
    "ToastRack",
]

TEXTUAL_CHECKED = "8.2.8"
"""The Textual version every function here was read against."""

TEXTUAL_RANGE = ">=8.2.8,<8.3"
"""The Textual versions accepted: patch releases of the version checked (a minor release is read again first)."""

PRIVATE_NAMES: Mapping[str, tuple[str, ...]] = {
    "textual._styles_cache": ("StylesCache",),
    "textual._xterm_parser": ("XTermParser",),
    "textual.widgets._footer": ("FooterKey", "FooterLabel", "KeyGroup"),
    "textual.widgets._toast": ("Toast", "ToastRack"),
    "textual._styles_cache:StylesCache": ("get_inner_outer",),
    "textual.app:App": ("_batch_count", "_background_screens", "_display", "_driver", "_end_batch",
                        "_notifications"),
    "textual.screen:Screen": ("_compositor", "_selecting"),
    "textual.dom:DOMNode": ("_bindings", "_reactive_connect"),
    "textual.widget:Widget": ("_anchored", "_anchor_released", "_dirty_regions", "_pending_children",
                              "_render_content", "_styles_cache"),
    "textual.widgets._footer:Footer": ("_bindings_ready",),
    "textual.widgets._footer:FooterKey": ("_disabled",),
    "textual.css.styles:RenderStyles": ("_cache_key",),
    "textual.css.stylesheet:Stylesheet": ("_invalid_css", "_parse_rules", "_require_parse", "_rules", "_rules_map",
                                          "_variables"),
    "textual.pilot:Pilot": ("_post_mouse_events",),
    "textual.reactive": ("__watchers",),
}
"""Every private name used here: ``module`` → names in it, ``module:Class`` → attributes of its objects
(``textual.reactive``'s ``__watchers`` is the attribute it keeps each object's watchers in)."""


def installed_textual() -> str:
    """The version of Textual installed (its distribution's metadata)."""
    from importlib.metadata import version  # not at start-up: it loads the email package

    return version("textual")


# -- the stylesheet ---------------------------------------------------------------------------------
# Textual keeps each CSS source's parsed rules in the stylesheet (``Stylesheet._parse_cache``): every
# new app parses the CSS of every widget class it mounts again.

_SHARED_RULES: LRUCache[tuple[object, ...], list[RuleSet]] = LRUCache(1024)
"""Parsed rule sets by (CSS, where it was read from, default or not, tie breaker, scope, variables), for
every app of this process."""

_VARIABLE_SETS: dict[tuple[tuple[str, str], ...], int] = {}
"""The sets of CSS variables (themes) seen, each with a number that stands for it in the keys above."""


class SharedParseStylesheet(Stylesheet):
    """A stylesheet that parses each CSS source once per process, where Textual's parses it once per app.

    A source's rules depend only on its text, where it was read from, its place in the cascade and the
    CSS variables (the theme, substituted while parsing): the keys here hold all of them, so an app
    with another theme parses its own.  Textual never changes a rule set once parsed (its own cache
    already hands the same rule sets to every parse of one stylesheet), so apps can share them.
    Overrides ``Stylesheet._parse_rules`` and reads ``Stylesheet._variables``; :meth:`reparse` (a new
    theme) is Textual's, made with this class.
    """

    def __init__(self, *, variables: dict[str, str] | None = None) -> None:
        super().__init__(variables=variables)
        self._variables_number: int | None = None

    def set_variables(self, variables: dict[str, str]) -> None:
        """Set CSS variables (a new theme): the rules parsed with others no longer apply."""
        super().set_variables(variables)
        self._variables_number = None

    def _parse_rules(self, css: str, read_from: CSSLocation, is_default_rules: bool = False,
                     tie_breaker: int = 0, scope: str = "") -> list[RuleSet]:
        if self._variables_number is None:
            frozen = tuple(sorted(self._variables.items()))
            self._variables_number = _VARIABLE_SETS.setdefault(frozen, len(_VARIABLE_SETS))
        key = (css, read_from, is_default_rules, tie_breaker, scope, self._variables_number)
        rules = _SHARED_RULES.get(key)
        if rules is None:
            rules = super()._parse_rules(css, read_from, is_default_rules, tie_breaker, scope)
            _SHARED_RULES[key] = rules
        return rules

    def reparse(self) -> None:
        """Parse every source again with the variables set now, as Textual's ``reparse``, sharing parses."""
        stylesheet = SharedParseStylesheet(variables=self._variables)
        for read_from, (css, is_defaults, tie_breaker, scope) in self.source.items():
            stylesheet.add_source(css, read_from=read_from, is_default_css=is_defaults,
                                  tie_breaker=tie_breaker, scope=scope)
        try:
            stylesheet.parse()
        except Exception:
            self._invalid_css.update(stylesheet._invalid_css)
            raise
        self._rules = stylesheet.rules
        self._rules_map = None
        self.source = stylesheet.source
        self._require_parse = False


def share_css_parses(app: App[Any]) -> None:
    """Give ``app`` a stylesheet that shares parsed CSS with the other apps of this process (call it in
    the app's ``__init__``, before anything reads CSS into it)."""
    app.stylesheet = SharedParseStylesheet(variables=app.get_css_variables())


# -- the footer -------------------------------------------------------------------------------------
# FooterKey, FooterLabel and KeyGroup (textual.widgets._footer) are the widgets Textual's Footer
# composes; KeyFooter sorts, regroups and measures them, so it has to know them by class.

def pending_children(widget: Widget) -> list[Widget]:
    """The children ``widget`` was created with and has not mounted yet (``Widget._pending_children``).

    A ``KeyGroup`` that the footer composed holds its keys there until it is mounted; the footer reads
    them to rank and regroup keys before anything is mounted.
    """
    return list(widget._pending_children)


def footer_key_disabled(key: FooterKey) -> bool:
    """Whether ``key`` was made disabled (``FooterKey._disabled``), to make a copy of it as it was."""
    return key._disabled


def drop_data_binding(node: DOMNode) -> bool:
    """Undo a ``data_bind`` made on ``node`` before it was mounted (``DOMNode._reactive_connect``); True if there was one.

    Textual's footer binds each key's ``compact`` to its own; once mounted, that registers a watcher on
    the footer which keeps the key alive until ``compact`` changes, so every recompose leaked its keys.
    """
    if not node._reactive_connect:
        return False
    node._reactive_connect = None
    return True


def footer_bindings_ready(footer: Footer) -> bool:
    """Whether ``footer`` has seen the screen's bindings (``Footer._bindings_ready``): before, it composes nothing."""
    return footer._bindings_ready


def mark_footer_bindings_ready(footer: Footer) -> None:
    """Tell ``footer`` the screen's bindings are there (``Footer._bindings_ready``), as Textual does
    once the app has the focus: a terminal in a browser tab gets the focus only with the first click."""
    footer._bindings_ready = True


def declared_bindings(node: DOMNode) -> Mapping[str, list[Binding]]:
    """Key → the bindings ``node`` declares for it, whether or not they can act now (``DOMNode._bindings``).

    ``Screen.active_bindings`` leaves out bindings whose ``check_action`` says no; deciding that a
    printable key is typing needs to know that a binding exists at all.
    """
    return node._bindings.key_to_bindings


def reactive_watchers(node: DOMNode) -> dict[str, list[object]]:
    """Reactive name → callbacks registered on ``node``'s reactives (the ``__watchers`` attribute
    ``textual.reactive`` keeps); each keeps its owner alive until it fires.  Used by the tests."""
    watchers: dict[str, list[object]] = getattr(node, "__watchers", {})
    return watchers


# -- toasts -----------------------------------------------------------------------------------------

def toast_racks(screen: Screen[Any]) -> list[ToastRack]:
    """The toast racks mounted on ``screen`` (``textual.widgets._toast.ToastRack``).

    A dialog limits its rack's height so that toasts never cover its buttons.
    """
    return list(screen.query_children(ToastRack))


# -- drawing ----------------------------------------------------------------------------------------

def forget_inner_outer_colours() -> None:
    """Empty the ``lru_cache`` on ``StylesCache.get_inner_outer`` (``textual._styles_cache``).

    Textual 8.2 caches it per styles cache, so the last 1,024 widgets drawn stay alive with every line
    they rendered long after they left the screen.  The cache saves recomputing two colours; it refills.
    """
    StylesCache.get_inner_outer.cache_clear()


def styles_cache_of(widget: Widget) -> StylesCache:
    """The cache of lines ``widget`` drew (``Widget._styles_cache``).  Used by the tests, to find caches no widget owns."""
    return widget._styles_cache


def styles_key(styles: RenderStyles) -> int:
    """A key that changes whenever ``styles`` change (``RenderStyles._cache_key``), to keep lines drawn with them."""
    return styles._cache_key


def forget_dirty_regions(widget: Widget) -> None:
    """Tell ``widget`` it has been drawn (``Widget._dirty_regions``), as its own ``_render_content`` does.

    A widget that hands out lines it keeps itself clears them the same way Textual's drawing does,
    or Textual would draw the widget again.
    """
    widget._dirty_regions.clear()


def draw_with_textual(widget: Widget) -> None:
    """Let Textual draw ``widget``'s whole renderable into its render cache (``Widget._render_content``).
    Used by the tests, to compare a widget's own drawing with Textual's."""
    widget._render_content()


def is_selecting(screen: Screen[Any]) -> bool:
    """Whether the user is dragging out a text selection on ``screen`` (``Screen._selecting``)."""
    return bool(screen._selecting)


def screen_strips(screen: Screen[Any]) -> list[Strip]:
    """The rows of ``screen`` as its compositor draws them now (``Screen._compositor``).  Used by the tests."""
    return screen._compositor.render_strips()


def visible_widgets(screen: Screen[Any]) -> Iterable[Widget]:
    """The widgets of ``screen`` that show at least in part (``Screen._compositor``).  Used by the tests."""
    return screen._compositor.visible_widgets.keys()


def on_each_frame(app: App[Any], seen: Callable[[], None]) -> None:
    """Call ``seen`` after each frame ``app`` writes to the terminal (wraps ``App._display``).  Used by the tests."""
    display = app._display

    def displayed(screen: Screen[Any], renderable: RenderableType | None) -> None:
        display(screen, renderable)
        if renderable is not None:
            seen()

    app._display = displayed  # type: ignore[method-assign]


# -- scrolling --------------------------------------------------------------------------------------

def is_anchor_released(widget: Widget) -> bool:
    """Whether ``widget``'s anchor is let go, the user having scrolled up (``Widget._anchor_released``)."""
    return widget._anchor_released


def anchor_released(widget: Widget) -> None:
    """Anchor ``widget`` but let go of it at once (``Widget._anchored``), as after the user scrolled up:
    Textual anchors it again when the user scrolls back to the bottom, without scrolling there now."""
    widget._anchored = True
    widget.release_anchor()


# -- the app and the terminal -----------------------------------------------------------------------

def write_to_terminal(app: App[Any], sequence: str) -> None:
    """Write ``sequence`` to the terminal between frames, through the app's driver (``App._driver``).

    Textual writes its own sequences (the bell, the clipboard) that way; there is no public way to
    write another (a desktop notification).  Nothing is written before the app runs.
    """
    driver = app._driver
    if driver is not None:
        driver.write(sequence)


def driver_of(app: App[Any]) -> Any:
    """The driver ``app`` draws through (``App._driver``), None before it runs.  Used by the tests."""
    return app._driver


def notifications_of(app: App[Any]) -> Notifications:
    """The collection of notifications ``app`` shows now, oldest first (``App._notifications``).  Used by the tests."""
    return app._notifications


def lay_out_screens_under_dialogs(app: App[Any]) -> None:
    """After each batch update, let every screen drawn under the top one look at the layout it owes.

    Wraps ``App._end_batch`` (reading ``App._batch_count`` and ``App._background_screens``).  A screen
    lays itself out on its update timer, which pauses after each tick and resumes only at that
    screen's next idle moment; a tick that falls inside a batch update (a widget recomposing, such as
    a dialog's footer as it opens) skips the layout.  The top screen has idle moments all the time;
    the screen under a dialog gets none, so a change made to it then (its footer redrawn for the keys
    a dialog turns off) stayed unlaid out, its footer never measured, until the dialog closed.
    """
    end_batch = app._end_batch

    def end_batch_then_check_screens() -> None:
        end_batch()
        if not app._batch_count:
            for screen in app._background_screens:
                screen.check_idle()

    app._end_batch = end_batch_then_check_screens  # type: ignore[method-assign]


# -- the tests' terminal input ----------------------------------------------------------------------

def parse_terminal_input(data: str) -> list[Message]:
    """The key (and other) events a terminal's ``data`` makes, as the driver parses them
    (``textual._xterm_parser.XTermParser``), a lone escape flushed at the end.  Used by the tests."""
    from textual._xterm_parser import XTermParser  # the app's driver loads it when it runs

    parser = XTermParser()
    return [*parser.feed(data), *parser.feed("")]


async def post_mouse_events(pilot: Pilot[Any], kinds: list[type[MouseEvent]], widget: Widget,
                            offset: tuple[int, int]) -> bool:
    """Send mouse events of ``kinds`` at ``offset`` in ``widget`` (``Pilot._post_mouse_events``): the
    pilot has no public call for a wheel turn.  Used by the tests."""
    return await pilot._post_mouse_events(kinds, widget=widget, offset=offset)
