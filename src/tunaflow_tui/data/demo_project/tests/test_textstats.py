"""Tests for the basic counters (standard-library unittest: pytest runs them too)."""

import unittest

from textstats import average_word_length, line_count, word_count, words


class CounterTests(unittest.TestCase):
    def test_words_are_lower_cased_without_punctuation(self) -> None:
        self.assertEqual(words("Hello, World! It's fine."), ["hello", "world", "it's", "fine"])

    def test_word_count(self) -> None:
        self.assertEqual(word_count("the quick brown fox"), 4)
        self.assertEqual(word_count(""), 0)

    def test_line_count(self) -> None:
        self.assertEqual(line_count("a\nb\n"), 2)
        self.assertEqual(line_count("a\nb"), 2)
        self.assertEqual(line_count(""), 0)

    def test_average_word_length(self) -> None:
        self.assertEqual(average_word_length("ab abcd"), 3.0)
        self.assertEqual(average_word_length("..."), 0.0)
