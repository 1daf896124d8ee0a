"""Token counts and cuts of long texts, taken paragraph by paragraph, equal those of the whole text."""

from __future__ import annotations

import random
from functools import lru_cache
from importlib import resources

import pytest
from tokenizers import Tokenizer

from tunaflow_tui.runtime.tokens import WordPieceCounter

_PIECES = ("refresh", "token", "rotation", "naïve", "café", "데이터베이스를", "缓存", "x" * 120, "`cfg.max_rows`",
           "—", "🙂", "\t", "  ", "\n", "\x00", "\u200b", "()", "don't", "1,536", "e2e-test")


@lru_cache(maxsize=1)
def _reference() -> Tokenizer:
    path = resources.files("tunaflow_tui") / "data" / "tokenizer" / "wordpiece-uncased.json"
    tokenizer = Tokenizer.from_str(path.read_text(encoding="utf-8"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _text(rng: random.Random) -> str:
    paragraphs = []
    for _ in range(rng.randint(2, 30)):
        words = [rng.choice(_PIECES) for _ in range(rng.randint(0, 60))]
        paragraphs.append(" ".join(words))
    breaks = ["\n\n", "\n\n\n", "\n \n", "\n\n  "]
    text = paragraphs[0]
    for paragraph in paragraphs[1:]:
        text += rng.choice(breaks) + paragraph
    return text


@pytest.mark.parametrize("seed", range(8))
def test_long_texts_count_and_cut_exactly_as_a_whole(seed: int) -> None:
    rng = random.Random(seed)
    reference = _reference()
    counter = WordPieceCounter()
    text = _text(rng) * rng.choice((1, 3))
    offsets = reference.encode(text, add_special_tokens=False).offsets
    assert counter.count(text) == len(offsets)
    for budget in {1, 2, len(offsets) // 3, len(offsets) // 2, len(offsets) - 1, len(offsets), len(offsets) + 5,
                   *(rng.randint(1, max(1, len(offsets))) for _ in range(6))}:
        if budget <= 0:
            continue
        head = text if budget >= len(offsets) else text[:offsets[budget - 1][1]]
        tail = text if budget >= len(offsets) else text[offsets[len(offsets) - budget][0]:]
        assert counter.truncate(text, budget) == head, budget
        assert counter.truncate(text, budget, keep="tail") == tail, budget


def test_a_new_turn_joining_long_recent_turns_tokenizes_only_the_new_turn() -> None:
    counter = WordPieceCounter()
    turns = [f"**Architect**: {'the rotation window of refresh tokens ' * 200}{n}" for n in range(6)]
    counter.count("\n\n".join(turns))
    encoded: list[str] = []
    inner = counter._tokenizer

    class Watching:
        def encode(self, text: str, add_special_tokens: bool = True) -> object:
            encoded.append(text)
            return inner.encode(text, add_special_tokens=add_special_tokens)

    counter._tokenizer = Watching()  # type: ignore[assignment]
    newer = [*turns[1:], "**User**: and the grace period?"]
    assert counter.count("\n\n".join(newer)) == len(inner.encode("\n\n".join(newer), add_special_tokens=False).ids)
    assert encoded == ["**User**: and the grace period?"]
    encoded.clear()
    kept = counter.truncate("\n\n".join(newer), 900, keep="tail")
    assert kept.endswith("grace period?") and len(encoded) == 1 and encoded[0] in newer
