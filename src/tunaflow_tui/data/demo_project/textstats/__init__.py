"""Small, dependency-free text statistics."""

from textstats.core import average_word_length, line_count, word_count, words

__all__ = ["average_word_length", "line_count", "word_count", "words"]
