"""Search snippets and record lines as people read them: no marker comments, no Markdown syntax, alike
hits grouped.

A snippet is a window of a message (its Markdown as the agent wrote it) with the matched words
between ``«`` and ``»``. The CLI prints it as plain text (:func:`plain_snippet`); the app draws it
with inline code, bold and emphasis styled (:func:`snippet_runs`), and a record's unfolded lines the same
way (:func:`line_runs`). Both group hits whose messages say the same thing (a roundtable's seats
often do) with :func:`group_alike`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from tunaflow_tui.core.storage.search_query import SNIPPET_END, SNIPPET_START
from tunaflow_tui.core.terminal_text import neutralize

T = TypeVar("T")
Style = Literal["", "code", "strong", "em"]

#: A whole HTML comment (markers are ones), or one cut short (at the end, or where an ellipsis says so).
_COMMENT = re.compile(r"<!--.*?(?:-->|(?=…)|\Z)", re.S)
#: The end of a comment the window began inside of.
_COMMENT_TAIL = re.compile(r"\A[^<]*?-->")
_FENCE = re.compile(r"^\s*(```|~~~)[^\n]*$", re.M)
_LINE_START = re.compile(r"^\s{0,3}(?:#{1,6}\s+|>\s?)", re.M)
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
#: Inline spans, first match wins: code (its content taken as it is), strong, emphasis.
_INLINE = re.compile(r"`([^`\n]+)`|\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__"
                     r"|(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_ALIKE_WORDS = 60
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class SnippetRun:
    """A stretch of a snippet drawn one way: its text, whether it matched the query, its style."""

    text: str
    matched: bool
    style: Style


def _without_markup_lines(text: str) -> str:
    text = _COMMENT_TAIL.sub("", text)
    text = _COMMENT.sub(" ", text)
    text = _FENCE.sub(" ", text)
    text = _LINE_START.sub("", text)
    return _IMAGE_OR_LINK.sub(r"\1", neutralize(text))


def _styled(text: str) -> list[tuple[str, Style]]:
    """``text`` cut into (text, style) pieces, the inline Markdown syntax removed."""
    pieces: list[tuple[str, Style]] = []
    position = 0
    for found in _INLINE.finditer(text):
        if found.start() > position:
            pieces.append((text[position:found.start()], ""))
        code, strong, strong_too, em = found.groups()
        if code is not None:
            pieces.append((code.strip() if code.strip() else code, "code"))
        elif strong is not None or strong_too is not None:
            pieces.append((strong if strong is not None else strong_too, "strong"))
        else:
            pieces.append((em, "em"))
        position = found.end()
    if position < len(text):
        pieces.append((text[position:], ""))
    return pieces


def snippet_runs(snippet: str) -> list[SnippetRun]:
    """The snippet on one line as runs to draw: markers and Markdown syntax gone, matches flagged.

    ``Run «`frequency.py`»: done <!-- tunaflow:subtask-done:2 -->`` gives ``Run ``, then
    ``frequency.py`` (matched, code) and ``: done`` — inline code keeps its punctuation beside it.
    """
    return _runs(snippet, marks=True)


def line_runs(line: str) -> list[SnippetRun]:
    """One line of Markdown as runs to draw (no query marks: « and » are text); its indentation kept."""
    body = line.lstrip()
    indent = line[:len(line) - len(body)]
    runs = _runs(body, marks=False)
    return [SnippetRun(indent, False, ""), *runs] if indent and runs else runs


def _runs(source: str, *, marks: bool) -> list[SnippetRun]:
    text = " ".join(_without_markup_lines(source).split())
    runs: list[SnippetRun] = []
    matched = False
    splitter = f"({re.escape(SNIPPET_START)}|{re.escape(SNIPPET_END)})" if marks else "(?!)"
    for piece, style in _styled(text):
        for part in re.split(splitter, piece):
            if part == SNIPPET_START:
                matched = True
            elif part == SNIPPET_END:
                matched = False
            elif part:
                runs.append(SnippetRun(part, matched, style))
    return runs


def plain_snippet(snippet: str, *, marks: bool = False) -> str:
    """The snippet as plain text on one line; with ``marks`` the matched words stay between « and »."""
    out: list[str] = []
    matched = False
    for run in snippet_runs(snippet):
        if marks and run.matched != matched:
            out.append(SNIPPET_START if run.matched else SNIPPET_END)
            matched = run.matched
        out.append(run.text)
    if marks and matched:
        out.append(SNIPPET_END)
    return "".join(out)


def alike_key(text: str) -> str:
    """What two messages share when they say the same thing: their first words, lower case, no markup."""
    words = _WORD.findall(plain_snippet(text).lower())
    return " ".join(words[:_ALIKE_WORDS])


def group_alike(items: Iterable[T], text_of: Callable[[T], str]) -> list[tuple[T, Sequence[T]]]:
    """Each item that says something new, in order, with the later items that say the same thing.

    Two items are alike when :func:`alike_key` of their texts is the same (and not empty).
    """
    groups: dict[str, tuple[T, list[T]]] = {}
    order: list[tuple[T, list[T]]] = []
    for item in items:
        key = alike_key(text_of(item))
        if key and key in groups:
            groups[key][1].append(item)
            continue
        group: tuple[T, list[T]] = (item, [])
        if key:
            groups[key] = group
        order.append(group)
    return [(first, tuple(more)) for first, more in order]


def more_like_it(count: int) -> str:
    """``and 11 more like it`` (empty for none)."""
    return f"and {count} more like it" if count else ""
