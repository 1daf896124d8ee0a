"""A deterministic measure of the work code does, for tests that check it grows linearly with its input.

Wall time is useless for that on a loaded machine; this counts instead, for the code under a given
folder: every Python line it executes, plus the length of every string it calls a whole-string
method on (``strip``, ``casefold``, ``replace``, ``split``…), the methods whose cost is the string's
length. A slice cut and stripped once per step of a loop then shows up as the square it is.
Searches with bounds (``find(sub, start, end)``) are left out: they cost their window, not the
string they run on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

WHOLE_STRING_METHODS = frozenset({
    "strip", "lstrip", "rstrip", "casefold", "lower", "upper", "replace", "split", "rsplit", "splitlines",
    "isalpha", "isdigit", "isspace", "isascii", "isalnum", "expandtabs", "translate", "encode",
})  # fmt: skip


def work(fn: Callable[[], object], folder: str) -> int:
    """Lines executed plus characters handled by whole-string methods while ``fn()`` runs in ``folder``."""
    total = 0

    def ours(frame: FrameType) -> bool:
        return folder in frame.f_code.co_filename

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        if not ours(frame):
            return None

        def lines(frame: FrameType, event: str, arg: Any) -> Any:
            nonlocal total
            if event == "line":
                total += 1
            return lines

        return lines

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal total
        if event == "c_call" and ours(frame) and getattr(arg, "__name__", "") in WHOLE_STRING_METHODS:
            receiver = getattr(arg, "__self__", None)
            if isinstance(receiver, str):
                total += len(receiver)

    old_trace, old_profile = sys.gettrace(), sys.getprofile()
    sys.settrace(trace)
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.settrace(old_trace)
        sys.setprofile(old_profile)
    return total


def growth(make: Callable[[int], str], fn: Callable[[str], object], folder: str, small: int) -> float:
    """Work per character of ``fn`` on ``make(4 * small)`` over that on ``make(small)`` (1.0 is linear)."""
    little, big = make(small), make(4 * small)
    per_char_little = work(lambda: fn(little), folder) / len(little)
    per_char_big = work(lambda: fn(big), folder) / len(big)
    return per_char_big / per_char_little
