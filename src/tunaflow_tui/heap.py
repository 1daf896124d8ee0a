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
    return True
