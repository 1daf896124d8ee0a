"""Tests for the basic counters."""

from textstats import average_word_length, line_count, word_count, words


def test_words_are_lower_cased_without_punctuation() -> None:
    assert words("Hello, World! It's fine.") == ["hello", "world", "it's", "fine"]


def test_word_count() -> None:
    assert word_count("the quick brown fox") == 4
    assert word_count("") == 0


def test_line_count() -> None:
    assert line_count("a\nb\n") == 2
    assert line_count("a\nb") == 2
    assert line_count("") == 0


def test_average_word_length() -> None:
    assert average_word_length("ab abcd") == 3.0
    assert average_word_length("...") == 0.0
