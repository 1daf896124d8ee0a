"""Token counting with a real tokenizer (WordPiece, shipped with the package)."""

from __future__ import annotations

import threading
from functools import lru_cache
from importlib import resources
from typing import Protocol

from tokenizers import Tokenizer

_LOCK = threading.Lock()
#: Texts whose counts are remembered, and the longest text remembered (longer ones are rare).
_CACHE_ENTRIES = 2_048
_CACHED_TEXT_CHARS = 200_000


class TokenCounter(Protocol):
    """Counts tokens in a text."""

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        ...  # pragma: no cover - protocol


class WordPieceCounter:
    """Counts tokens with the packaged WordPiece tokenizer (no truncation, no padding)."""

    def __init__(self) -> None:
        self._cached_count = lru_cache(maxsize=_CACHE_ENTRIES)(self._count)
        path = resources.files("tunaflow_tui") / "data" / "tokenizer" / "wordpiece-uncased.json"
        self._tokenizer = Tokenizer.from_str(path.read_text(encoding="utf-8"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def count(self, text: str) -> int:
        """Number of tokens in ``text`` (special tokens excluded).

        Recent counts are remembered: successive packs share most of their text (the plan, the
        recent turns, summaries, retrieved chunks), so each is tokenized once, not per turn.
        """
        if not text:
            return 0
        if len(text) > _CACHED_TEXT_CHARS:
            return self._count(text)
        return self._cached_count(text)

    def _count(self, text: str) -> int:
        with _LOCK:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def truncate(self, text: str, max_tokens: int, *, keep: str = "head") -> str:
        """Cut ``text`` to at most ``max_tokens`` tokens, keeping its head or its tail."""
        if max_tokens <= 0:
            return ""
        with _LOCK:
            encoding = self._tokenizer.encode(text, add_special_tokens=False)
        offsets = encoding.offsets
        if len(offsets) <= max_tokens:
            return text
        if keep == "tail":
            start = offsets[len(offsets) - max_tokens][0]
            return text[start:]
        end = offsets[max_tokens - 1][1]
        return text[:end]


@lru_cache(maxsize=1)
def default_counter() -> WordPieceCounter:
    """The shared counter (loaded once, on first use)."""
    return WordPieceCounter()
