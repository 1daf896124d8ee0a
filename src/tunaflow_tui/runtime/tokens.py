"""Token counting with a real tokenizer (WordPiece, shipped with the package)."""

from __future__ import annotations

import threading
from functools import lru_cache
from importlib import resources
from typing import Protocol

from tokenizers import Tokenizer

_LOCK = threading.Lock()


class TokenCounter(Protocol):
    """Counts tokens in a text."""

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        ...  # pragma: no cover - protocol


class WordPieceCounter:
    """Counts tokens with the packaged WordPiece tokenizer (no truncation, no padding)."""

    def __init__(self) -> None:
        path = resources.files("tunaflow_tui") / "data" / "tokenizer" / "wordpiece-uncased.json"
        self._tokenizer = Tokenizer.from_str(path.read_text(encoding="utf-8"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def count(self, text: str) -> int:
        """Number of tokens in ``text`` (special tokens excluded)."""
        if not text:
            return 0
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
