"""Token counting with a real tokenizer (WordPiece, shipped with the package)."""

from __future__ import annotations

import threading
from functools import lru_cache
from importlib import resources
from typing import Protocol

_LOCK = threading.Lock()
#: Texts whose counts are remembered, and the longest text remembered (longer ones are rare).
_CACHE_ENTRIES = 2_048
_CACHED_TEXT_CHARS = 200_000
#: Texts longer than this are counted (and cut) paragraph by paragraph.
_PARAGRAPH_WISE_CHARS = 2_000
_PARAGRAPH_BREAK = "\n\n"


class TokenCounter(Protocol):
    """Counts tokens in a text."""

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        ...  # pragma: no cover - protocol


class WordPieceCounter:
    """Counts tokens with the packaged WordPiece tokenizer (no truncation, no padding)."""

    def __init__(self) -> None:
        # Imported here, not with the module: a project opens without the tokenizer library until a
        # pack is counted (the embedding model's own tokenizer runs in the embedding worker).
        from tokenizers import Tokenizer

        self._cached_count = lru_cache(maxsize=_CACHE_ENTRIES)(self._count)
        path = resources.files("tunaflow_tui") / "data" / "tokenizer" / "wordpiece-uncased.json"
        self._tokenizer = Tokenizer.from_str(path.read_text(encoding="utf-8"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def count(self, text: str) -> int:
        """Number of tokens in ``text`` (special tokens excluded).

        Recent counts are remembered: successive packs share most of their text (the plan, the
        recent turns, summaries, retrieved chunks), so each is tokenized once, not per turn. A
        long text is counted paragraph by paragraph (WordPiece never makes a token across a blank
        line, so the sum is exact): when a new turn joins the recent ones, only it is tokenized.
        """
        if not text:
            return 0
        if len(text) > _PARAGRAPH_WISE_CHARS and _PARAGRAPH_BREAK in text:
            return sum(self._count_one(paragraph) for paragraph in text.split(_PARAGRAPH_BREAK))
        return self._count_one(text)

    def _count_one(self, text: str) -> int:
        if not text:
            return 0
        if len(text) > _CACHED_TEXT_CHARS:
            return self._count(text)
        return self._cached_count(text)

    def _count(self, text: str) -> int:
        with _LOCK:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def _offsets(self, text: str) -> list[tuple[int, int]]:
        with _LOCK:
            offsets: list[tuple[int, int]] = self._tokenizer.encode(text, add_special_tokens=False).offsets
        return offsets

    def truncate(self, text: str, max_tokens: int, *, keep: str = "head") -> str:
        """Cut ``text`` to at most ``max_tokens`` tokens, keeping its head or its tail.

        The cut falls right after the last token kept (head) or right before the first (tail).
        A long text is walked paragraph by paragraph on remembered counts, and only the
        paragraph the cut falls in is tokenized.
        """
        if max_tokens <= 0:
            return ""
        if len(text) > _PARAGRAPH_WISE_CHARS and _PARAGRAPH_BREAK in text:
            return self._truncate_paragraphs(text, max_tokens, keep)
        offsets = self._offsets(text)
        if len(offsets) <= max_tokens:
            return text
        if keep == "tail":
            return text[offsets[len(offsets) - max_tokens][0]:]
        return text[:offsets[max_tokens - 1][1]]

    def _truncate_paragraphs(self, text: str, max_tokens: int, keep: str) -> str:
        spans: list[tuple[int, int, int]] = []  # (start, end, tokens) of each paragraph with tokens
        start = 0
        for paragraph in text.split(_PARAGRAPH_BREAK):
            tokens = self._count_one(paragraph)
            if tokens:
                spans.append((start, start + len(paragraph), tokens))
            start += len(paragraph) + len(_PARAGRAPH_BREAK)
        if keep == "tail":
            spans.reverse()
        used = 0
        previous: tuple[int, int, int] | None = None
        for begin, end, tokens in spans:
            if used + tokens > max_tokens:
                remaining = max_tokens - used
                if keep == "tail":
                    if remaining == 0:  # the cut falls before the first token of the paragraph after this one
                        assert previous is not None
                        return text[previous[0] + self._offsets(text[previous[0]:previous[1]])[0][0]:]
                    offsets = self._offsets(text[begin:end])
                    return text[begin + offsets[len(offsets) - remaining][0]:]
                if remaining == 0:  # the cut falls after the last token of the paragraph before this one
                    assert previous is not None
                    return text[:previous[0] + self._offsets(text[previous[0]:previous[1]])[-1][1]]
                return text[:begin + self._offsets(text[begin:end])[remaining - 1][1]]
            used += tokens
            previous = (begin, end, tokens)
        return text


@lru_cache(maxsize=1)
def default_counter() -> WordPieceCounter:
    """The shared counter (loaded once, on first use)."""
    return WordPieceCounter()
