"""The bundled sample project (``textstats``) and the changes the demo Developer makes to it."""

from __future__ import annotations

import os
import shutil
import subprocess
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

PLAN_TITLE = "Add a word-frequency report to textstats"
SUBTASKS: tuple[str, ...] = (
    "Add `word_frequencies(text)` in `textstats/frequency.py`: case-insensitive counts of each word, "
    "reusing `textstats.core.words`; export it from `textstats/__init__.py`.",
    "Add `frequency_report(text, top=5)`: the `top` most frequent words, one per line as "
    "`word  count`, ties broken alphabetically; `top < 1` raises `ValueError`.",
    "Add `tests/test_frequency.py` covering both functions, including the empty-text edge case, "
    "and document the report in `README.md`.",
)
EDGE_CASE_TEST = "def test_empty_text_has_no_frequencies"
_SKIP = {"__pycache__", ".pytest_cache"}
TEST_COMMAND = "python -m unittest discover -s tests"
"""How the sample project's own tests run: the standard library only, green on any install."""
_FALLBACK_IDENTITY = ("tunaflow demo", "demo@tunaflow.invalid")

FREQUENCY_MODULE_PART1 = '''"""Word frequencies and a plain-text frequency report."""

from __future__ import annotations

from collections import Counter

from textstats.core import words


def word_frequencies(text: str) -> dict[str, int]:
    """How often each word occurs in ``text`` (case-insensitive, punctuation ignored)."""
    return dict(Counter(words(text)))
'''

FREQUENCY_MODULE_PART2 = '''

def frequency_report(text: str, top: int = 5) -> str:
    """The ``top`` most frequent words of ``text``, one ``word  count`` line each.

    Ties are broken alphabetically, so the report is stable. ``top`` must be at least 1.
    """
    if top < 1:
        raise ValueError("top must be at least 1")
    ranked = sorted(word_frequencies(text).items(), key=lambda item: (-item[1], item[0]))[:top]
    if not ranked:
        return ""
    width = max(len(word) for word, _ in ranked)
    return "\\n".join(f"{word.ljust(width)}  {count}" for word, count in ranked)
'''

INIT_WITH_FREQUENCY = '''"""Small, dependency-free text statistics."""

from textstats.core import average_word_length, line_count, word_count, words
from textstats.frequency import frequency_report, word_frequencies

__all__ = [
    "average_word_length",
    "frequency_report",
    "line_count",
    "word_count",
    "word_frequencies",
    "words",
]
'''

FREQUENCY_TESTS = '''"""Tests for word frequencies and the frequency report (standard-library unittest)."""

import unittest

from textstats import frequency_report, word_frequencies


class FrequencyTests(unittest.TestCase):
    def test_frequencies_ignore_case_and_punctuation(self) -> None:
        self.assertEqual(word_frequencies("The cat. the CAT, a dog!"), {"the": 2, "cat": 2, "a": 1, "dog": 1})

    def test_report_lists_the_most_frequent_words_first(self) -> None:
        report = frequency_report("b a b c b a", top=2)
        self.assertEqual(report.splitlines(), ["b  3", "a  2"])

    def test_report_breaks_ties_alphabetically(self) -> None:
        self.assertEqual(frequency_report("pear apple", top=5).splitlines(), ["apple  1", "pear   1"])

    def test_report_rejects_a_non_positive_top(self) -> None:
        with self.assertRaises(ValueError):
            frequency_report("a", top=0)
'''

# a method of FrequencyTests: the class is the last thing in the file, so it is appended to it
EDGE_CASE_TESTS = f'''
    {EDGE_CASE_TEST}(self) -> None:
        self.assertEqual(word_frequencies(""), {{}})
        self.assertEqual(frequency_report("   "), "")
'''

README_SECTION = '''
## Word-frequency report

```python
>>> from textstats import frequency_report
>>> print(frequency_report("b a b c b a", top=2))
b  3
a  2
```
'''


def demo_project_files() -> Traversable:
    """The packaged sample project directory."""
    return resources.files("tunaflow_tui").joinpath("data", "demo_project")


def _copy_tree(source: Traversable, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for entry in source.iterdir():
        if entry.name in _SKIP or entry.name.endswith(".pyc"):
            continue
        if entry.is_dir():
            _copy_tree(entry, dest / entry.name)
        else:
            (dest / entry.name).write_bytes(entry.read_bytes())


def _has_git_identity(dest: Path) -> bool:
    if os.environ.get("GIT_AUTHOR_EMAIL") and os.environ.get("GIT_COMMITTER_EMAIL"):
        return True
    found = subprocess.run(["git", "config", "--get", "user.email"], cwd=dest, capture_output=True, text=True)
    return found.returncode == 0 and bool(found.stdout.strip())


def copy_demo_project(dest: Path) -> Path:
    """Copy the sample project to ``dest`` (absent or empty) and make it a git repo with one commit."""
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    _copy_tree(demo_project_files(), dest)
    if shutil.which("git") is None:
        raise FileNotFoundError("git is not installed")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=dest, check=True, capture_output=True)
    identity: list[str] = []
    if not _has_git_identity(dest):
        name, email = _FALLBACK_IDENTITY
        identity = ["-c", f"user.name={name}", "-c", f"user.email={email}"]
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True, capture_output=True)
    subprocess.run(
        ["git", *identity, "commit", "-q", "--no-gpg-sign", "-m", "textstats: initial sample project"],
        cwd=dest, check=True, capture_output=True,
    )
    return dest


def safe_path(root: Path, relative: str) -> Path:
    """``root / relative``, refusing anything that would land outside ``root``."""
    target = (root / relative).resolve()
    if not target.is_relative_to(root.resolve()):
        raise PermissionError(f"{relative} is outside {root}")
    return target


def is_sample_project(root: Path) -> bool:
    """Whether ``root`` looks like the bundled sample project."""
    return (root / "textstats" / "core.py").is_file()
