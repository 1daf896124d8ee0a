"""Keeping what the app loaded once out of the cycle collector's full passes.

A full collection walks every container object the process holds, and the app holds about a hundred
thousand of them by the time its first frame is up (Textual, Rich, the Markdown parser, the app's own
modules and widgets) — 50–80 ms of CPU per pass on a busy machine, every second or two while answers
stream, each pass landing in the middle of a frame and holding up the keys typed meanwhile.  Almost
all of those objects live as long as the process, so once they are loaded they are moved out of the
collector's sight (:func:`gc.freeze`); full passes then walk only what was made since.
"""

from __future__ import annotations

import gc

_frozen: set[str] = set()
_paused_until_first_frame = False


def pause_until_first_frame() -> None:
    """Turn the cycle collector off until the window's first frame is up (``tunaflow PATH``).

    Loading Textual and the app and composing the window makes some 130 young collections and a
    dozen of the middle generation (25–35 ms before the first frame, more on a busy machine), and
    nearly everything they walk lives as long as the process: :func:`freeze_loaded` collects once
    after the first frame and freezes what is left, and turns the collector back on.
    """
    global _paused_until_first_frame
    if gc.isenabled():
        gc.disable()
        _paused_until_first_frame = True


def resume_collections() -> None:
    """Turn the collector back on if :func:`pause_until_first_frame` turned it off (a no-op otherwise)."""
    global _paused_until_first_frame
    if _paused_until_first_frame:
        _paused_until_first_frame = False
        gc.enable()


def freeze_loaded(stage: str) -> bool:
    """Collect what is garbage now, then keep everything still alive out of later full collections.

    Done once per ``stage`` (``"first frame"``, ``"project open"``) and process: objects frozen are
    never collected, so what is alive at that moment and freed later in a reference cycle stays in
    memory; once per stage bounds that to what one first frame or one opening holds.

    Returns:
        True if this call froze the heap (the first for ``stage``).
    """
    if stage in _frozen:
        return False
    _frozen.add(stage)
    gc.collect()
    gc.freeze()
    resume_collections()
    return True


HELD_FULL_THRESHOLD = 1_000
"""The full-collection threshold while full passes are held (Python's default is 10): in effect none."""

_held: tuple[int, int, int] | None = None


def hold_full_collections() -> None:
    """Put off full collections (young ones go on) until :func:`release_full_collections`.

    A full pass costs 45–60 ms while answers stream; a key typed meanwhile waits for it.  The app
    holds them while the user types and lets them run again once the typing pauses.
    """
    global _held
    if _held is None:
        _held = gc.get_threshold()
        gc.set_threshold(_held[0], _held[1], HELD_FULL_THRESHOLD)


def release_full_collections() -> None:
    """Let full collections run again at the usual rate (a no-op when none are held)."""
    global _held
    if _held is not None:
        gc.set_threshold(*_held)
        _held = None


def full_collections_held() -> bool:
    """True between :func:`hold_full_collections` and :func:`release_full_collections`."""
    return _held is not None
