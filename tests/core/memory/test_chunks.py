"""Chunking messages for embedding: limits, boundaries, offsets, scripts without spaces, code fences."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.memory.chunks import MAX_CHUNK_CHARS, Chunk, split_into_chunks


def check_invariants(text: str, chunks: list[Chunk], max_chars: int = MAX_CHUNK_CHARS) -> None:
    """Every chunk fits, points back into the message, chunks are ordered, and no word is lost."""
    previous_end = 0
    for position, chunk in enumerate(chunks):
        assert chunk.index == position
        assert 0 < len(chunk.text) <= max_chars
        assert text[chunk.start:chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip()
        assert chunk.start >= previous_end
        # nothing but whitespace is skipped between chunks
        assert text[previous_end:chunk.start].strip() == ""
        previous_end = chunk.end
    assert text[previous_end:].strip() == ""


def sentence(i: int) -> str:
    return f"The retry loop in worker {i} backs off exponentially before giving up."


def test_blank_text_has_no_chunks() -> None:
    assert split_into_chunks("") == []
    assert split_into_chunks(" \n\n\t ") == []


def test_a_short_message_is_one_chunk_stripped() -> None:
    chunks = split_into_chunks("\n  Ship it after the tests pass.  \n")
    assert [(c.start, c.end, c.text) for c in chunks] == [(3, 32, "Ship it after the tests pass.")]


def test_paragraphs_are_packed_and_cut_between_paragraphs() -> None:
    paragraphs = [" ".join(sentence(p * 10 + i) for i in range(4)) for p in range(6)]  # ~290 chars each
    text = "\n\n".join(paragraphs)
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    assert [c.text for c in chunks] == ["\n\n".join(paragraphs[i:i + 2]) for i in (0, 2, 4)]


def test_a_long_paragraph_is_cut_between_sentences() -> None:
    text = " ".join(sentence(i) for i in range(40))
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.text.startswith("The retry loop") and chunk.text.endswith("giving up.")


def test_an_overlong_paragraph_does_not_borrow_from_its_neighbours() -> None:
    long_paragraph = " ".join(sentence(i) for i in range(20))
    text = f"Short intro.\n\n{long_paragraph}\n\nShort outro."
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    assert chunks[0].text == "Short intro." and chunks[-1].text == "Short outro."


def test_a_sentence_longer_than_the_limit_is_cut_between_words() -> None:
    text = "Run " + ", then ".join(f"step{i} with --flag-{i}" for i in range(120)) + "."
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    words = set(text.split())
    for chunk in chunks:
        assert set(chunk.text.split()) <= words  # no word was cut in two


def test_code_fences_stay_whole_where_they_fit() -> None:
    code = "```python\ndef retry(fn):\n\n    for attempt in range(5):\n        fn()\n```"
    before = " ".join(sentence(i) for i in range(8))  # ~570 characters
    text = f"{before}\n\n{code}\n\nThat is the whole helper."
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    holding = [c for c in chunks if "def retry" in c.text]
    assert len(holding) == 1 and code in holding[0].text  # the blank line inside did not split it
    assert holding[0].text.endswith("That is the whole helper.")


def test_a_code_block_too_long_for_one_chunk_is_cut_between_lines() -> None:
    lines = [f"    value_{i} = compute(value_{i - 1}, factor={i})" for i in range(1, 60)]
    text = "```python\n" + "\n".join(lines) + "\n```"
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    assert len(chunks) >= 3
    for chunk in chunks:
        for line in chunk.text.splitlines():
            assert line.strip() in {"```python", "```"} or line.strip() in {entry.strip() for entry in lines}


def test_an_unclosed_fence_runs_to_the_end() -> None:
    text = "Intro line.\n\n```\ncode line\n\nmore code\n"
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    assert chunks[-1].text.endswith("more code") and "```" in chunks[-1].text


def test_korean_is_cut_between_sentences() -> None:
    sentences = [f"{i}번째 작업자가 데이터베이스 연결을 다시 시도했습니다." for i in range(60)]
    text = " ".join(sentences)
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    for chunk in chunks:
        assert chunk.text.endswith("시도했습니다.")


def test_korean_without_spaces_is_cut_safely() -> None:
    text = "데이터베이스연결재시도" * 200  # 2,200 syllables, no space or punctuation
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    assert "".join(c.text for c in chunks) == text


def test_decomposed_hangul_is_never_cut_inside_a_syllable() -> None:
    text = unicodedata.normalize("NFD", "한국어텍스트" * 300)  # each syllable is 2–3 jamo code points
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    for chunk in chunks:
        # a chunk starting with a vowel or final jamo would have split a syllable
        assert not 0x1160 <= ord(chunk.text[0]) <= 0x11FF
        assert all("\uac00" <= ch <= "\ud7a3" for ch in unicodedata.normalize("NFC", chunk.text))
    assert "".join(c.text for c in chunks) == text


def test_combining_marks_and_emoji_sequences_stay_with_their_base() -> None:
    text = ("e\u0301" * 500) + ("👩\u200d💻" * 400)
    chunks = split_into_chunks(text, max_chars=100)
    check_invariants(text, chunks, 100)
    for chunk in chunks:
        assert unicodedata.category(chunk.text[0]) != "Mn" and chunk.text[0] != "\u200d"
        assert chunk.text[-1] != "\u200d"


def test_chinese_is_cut_after_its_full_stops() -> None:
    text = "数据库连接在高负载下超时，我们需要增加连接池的大小。" * 60
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    assert all(chunk.text.endswith("。") for chunk in chunks)


def test_indonesian_message() -> None:
    text = ("Tolong periksa kembali konfigurasi basis data sebelum kita menggabungkan cabang ini. "
            "Migrasi skema gagal di server staging karena kolom baru tidak memiliki nilai bawaan. ") * 12
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)
    assert all(c.text.endswith("bawaan.") or c.text.endswith("ini.") for c in chunks)


def test_a_long_url_is_cut_after_a_separator() -> None:
    url = "https://example.com/" + "/".join(f"segment{i}" for i in range(200))
    chunks = split_into_chunks(url)
    check_invariants(url, chunks)
    assert all(c.text.endswith("/") for c in chunks[:-1])


@pytest.mark.parametrize("text", [
    "x" * 1_000_000,
    "\n" * 500_000 + "end",
    "```\n" * 200_000,
    ". " * 400_000,
    ("word " * 150 + "\n\n") * 1000,
], ids=["no-space", "newlines", "fence-lines", "full-stops", "paragraphs"])
def test_megabyte_messages_are_chunked(text: str) -> None:
    chunks = split_into_chunks(text)
    check_invariants(text, chunks)


def test_chunking_is_deterministic() -> None:
    text = "\n\n".join(" ".join(sentence(p * 7 + i) for i in range(p % 5 + 1)) for p in range(40))
    assert split_into_chunks(text) == split_into_chunks(text)


def test_the_limit_is_configurable_but_not_absurd() -> None:
    text = " ".join(sentence(i) for i in range(10))
    check_invariants(text, split_into_chunks(text, max_chars=120), 120)
    with pytest.raises(ValueError):
        split_into_chunks(text, max_chars=3)


_ALPHABET = st.sampled_from([*"ab .!?\n\t`~한국어。、/é\u0301\u200d", "```", "\n\n", "```py\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=400).map("".join), st.integers(min_value=16, max_value=120))
def test_any_text_keeps_every_character_within_limits(text: str, max_chars: int) -> None:
    check_invariants(text, split_into_chunks(text, max_chars), max_chars)
