"""Waiting for a condition in a test: poll until it holds; the limit only turns a hang into a failure.

A wait in a test never stands for "long enough" (a fixed sleep or a number of pauses): it ends as
soon as what the test needs is true, so a loaded machine makes the test slower, never red.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

HANG_LIMIT = 240.0
"""Seconds after which a condition that never came true fails the test (below pytest's timeout of
300 s: a plan's whole cycle on a heavily loaded 2-core machine stays well inside it)."""

POLL = 0.01
"""Seconds between two looks at the condition."""


async def until(pilot: Any, condition: Callable[[], object], what: str, limit: float = HANG_LIMIT) -> None:
    """Let the app run (``pilot.pause``) until ``condition()`` is true; fail naming ``what`` otherwise.

    ``pilot`` may be None outside an app: then the event loop runs between looks.
    """
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:.0f}s for {what}")
        if pilot is None:
            await asyncio.sleep(POLL)
        else:
            await pilot.pause(POLL)


def until_sync(condition: Callable[[], object], what: str, limit: float = HANG_LIMIT) -> None:
    """Poll ``condition()`` from plain code until it is true; fail naming ``what`` otherwise."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:.0f}s for {what}")
        time.sleep(POLL)
