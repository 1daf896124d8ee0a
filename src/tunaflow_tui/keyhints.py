"""Key hints built from the bindings in force, so a key remapped in ``[ui.keymap]`` shows as remapped.

Cards, the decision dock, dialogs and the status line name keys ("a approve · f2 focus"). None of
them writes a key by hand: each asks here for the key its binding has now — the keymap override
when the user set one, else the binding's own first key — shown the way the footer shows it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from textual.binding import Binding, BindingType


class KeyDisplay(Protocol):
    """What a key hint needs of the app: how its footer writes a key (a Textual app has it)."""

    def get_key_display(self, binding: Binding) -> str:
        """``binding``'s key as the footer shows it: ``^p``, ``f2``."""
        ...


def keymap_of(app: KeyDisplay) -> Mapping[str, str]:
    """The binding id → keys overrides the app runs with (empty for an app that keeps none)."""
    overrides = getattr(app, "keymap_overrides", None)
    return overrides if isinstance(overrides, Mapping) else {}


def binding_key(app: KeyDisplay, binding: Binding) -> str:
    """The first key of ``binding`` as the footer shows it, after the keymap."""
    override = keymap_of(app).get(binding.id or "")
    if override:
        first = override.split(",")[0].strip()
        return app.get_key_display(Binding(first, binding.action))
    if binding.key_display:
        return binding.key_display
    first = binding.key.split(",")[0].strip()
    return app.get_key_display(Binding(first, binding.action))


def find_binding(bindings: Iterable[BindingType], binding_id: str) -> Binding | None:
    """The binding with ``binding_id`` among ``bindings`` (tuples are not bindings with ids)."""
    for binding in bindings:
        if isinstance(binding, Binding) and binding.id == binding_id:
            return binding
    return None


_GLYPH_WORDS = {"⏎": "enter", "⇥": "tab", "␣": "space"}


def in_words(key: str) -> str:
    """A key as a sentence or a button writes it: the footer's ``^p`` reads ``ctrl+p``, ``⏎`` enter."""
    if key.startswith("^") and len(key) > 1:
        return f"ctrl+{key[1:]}"
    return _GLYPH_WORDS.get(key, key)


def key_for(app: KeyDisplay, owner: type[Any], binding_id: str, default: str = "", *, words: bool = False) -> str:
    """The key of the binding ``binding_id`` declared by ``owner`` (a widget, screen or app class).

    ``default`` when no such binding exists (a caller names a key it does not own); ``words``
    writes it for a sentence (``ctrl+p``) rather than the footer (``^p``).
    """
    for cls in owner.__mro__:
        binding = find_binding(vars(cls).get("BINDINGS", ()), binding_id)
        if binding is not None:
            key = binding_key(app, binding)
            return in_words(key) if words else key
    return default


def app_key(app: KeyDisplay, binding_id: str, default: str = "") -> str:
    """The key of one of the app's own bindings, written for a sentence: ``f2``, ``ctrl+p``."""
    return key_for(app, type(app), binding_id, default, words=True)


def hint_line(app: KeyDisplay, owner: type[Any], items: Iterable[tuple[str, str]], *, sep: str = " · ") -> str:
    """``a approve · r request revision`` for ``(binding id, words)`` pairs of ``owner``'s bindings."""
    return sep.join(f"{key_for(app, owner, binding_id)} {words}" for binding_id, words in items)
