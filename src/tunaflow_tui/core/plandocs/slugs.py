"""Plan slugs: short ASCII names that are safe as file names and as part of a git branch name."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from tunaflow_tui.core.plandocs.plandoc_errors import PlanDocsError

SLUG_MAX_LEN = 60
_MAX_ATTEMPTS = 100_000

_SLUG_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# Names that would read as another plan's task, review or result document.
_RESERVED_SUFFIX_RE = re.compile(r".+-(?:task-[0-9]+|review-r[0-9]+|result)")
_WORD_RE = re.compile(r"[a-z0-9]+")


def is_valid_slug(slug: str) -> bool:
    """True for a slug ``make_slug`` could have produced: ``a-z0-9`` words joined by ``-``, ≤ 60 chars."""
    return (
        0 < len(slug) <= SLUG_MAX_LEN
        and _SLUG_RE.fullmatch(slug) is not None
        and _RESERVED_SUFFIX_RE.fullmatch(slug) is None
    )


def validate_slug(slug: str) -> str:
    """Return ``slug`` unchanged if valid, else raise ``PlanDocsError`` (a bad slug is never "fixed")."""
    if not isinstance(slug, str) or not is_valid_slug(slug):
        shown = slug[:80] if isinstance(slug, str) else type(slug).__name__
        raise PlanDocsError(f"invalid plan slug {shown!r}: expected lowercase ASCII words joined by '-'")
    return slug


def _words(title: str) -> list[str]:
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii").lower()
    return _WORD_RE.findall(ascii_text)


def _fit(words: list[str], limit: int) -> str:
    """Join ``words`` with ``-`` within ``limit`` characters, cutting at a word boundary when possible."""
    out = ""
    for word in words:
        candidate = f"{out}-{word}" if out else word
        if len(candidate) > limit:
            break
        out = candidate
    if not out and words:
        out = words[0][:limit]
    return out.rstrip("-")


def make_slug(title: str, *, plan_id: int, taken: Callable[[str], bool]) -> str:
    """A unique slug for a plan title.

    ASCII only (accents transliterated, everything else dropped), lowercase, words joined by ``-``,
    at most 60 characters; ``-2``, ``-3`` … on collision; ``plan-{id}`` when no ASCII word remains.
    """
    words = _words(title)
    if not words:
        words = ["plan", str(abs(int(plan_id)))]
    base = _fit(words, SLUG_MAX_LEN)
    candidate = base
    n = 1
    while not is_valid_slug(candidate) or taken(candidate):
        n += 1
        if n > _MAX_ATTEMPTS:
            raise PlanDocsError(f"no free slug for {base!r} after {_MAX_ATTEMPTS} attempts")
        suffix = f"-{n}"
        candidate = _fit(words, SLUG_MAX_LEN - len(suffix)) + suffix
    return candidate
