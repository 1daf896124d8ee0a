"""Find marker comments (``<!-- tunaflow:... -->``) in text and remove them.

Every ``<!--`` looks for its ``-->`` within a bounded window (one compiled pattern finds the next
``<!--`` that has one), so the work is linear in the length of the text whatever it contains.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final, NamedTuple

#: Longest comment body (between ``<!--`` and ``-->``) that can still be a marker.
MAX_COMMENT_BODY: Final = 120

BLOCK_KINDS: Final = frozenset({"plan-proposal", "review-verdict", "consensus"})
SINGLE_KINDS: Final = frozenset({"subtask-done", "impl-complete"})
_PREFIXES: Final = ("tunaflow:", "/tunaflow:")
#: ``<!--``, the shortest body up to MAX_COMMENT_BODY characters, ``-->``: the next comment that can be one.
_COMMENT: Final = re.compile(rf"<!--(.{{0,{MAX_COMMENT_BODY}}}?)-->", re.DOTALL)
#: Every character whose case-folded form starts with ``t`` or ``/`` (U+1E97 folds to ``t`` + a
#: combining mark): the first character of a comment body that can name tunaflow.
BODY_STARTS: Final = frozenset({"/", "T", "t", "\u1e97"})
#: A comment as :data:`_COMMENT` finds it, whose body starts (past blanks) with one of BODY_STARTS:
#: the others are passed over inside the regular expression engine. The body is group 1 or 2 (never
#: empty: the lookahead's character is in it). The first branch serves the usual comment, whose first
#: ``>`` ends its ``-->``: it runs to that ``>`` at once and steps back over the ``--``. Only a body
#: holding a ``>`` of its own goes to the second, which looks for ``-->`` after every character (as
#: :data:`_COMMENT` does everywhere, several times slower). Both find the same, first ``-->``.
_CANDIDATE: Final = re.compile(
    rf"<!--(?=\s*[/Tt\u1e97])(?:([^>]{{0,{MAX_COMMENT_BODY}}})-->|(.{{0,{MAX_COMMENT_BODY}}}?)-->)", re.DOTALL
)
_SCRUB_PASSES: Final = 4
#: The word an opening proposal marker names the plan it revises with: ``plan-proposal revises: #N``.
REVISES: Final = "revises"
_REVISING: Final = f"plan-proposal{REVISES}:#"
#: Blanks up to the end of a line (its newline included) or of the text.
_REST_OF_LINE: Final = re.compile(r"[ \t\r]*+(?:\n|\Z)")


class MarkerComment(NamedTuple):
    """One well-formed marker comment found in a text.

    ``start``/``end`` delimit the whole ``<!-- ... -->`` comment; ``closing`` is true for
    ``<!-- /tunaflow:KIND -->``; ``number`` is the N of ``subtask-done:N``, or of an opening
    ``plan-proposal revises: #N`` (the plan the proposal revises), else 0. A named tuple:
    a long reply holds thousands, and a tuple is the cheapest immutable record to make.
    """

    start: int
    end: int
    kind: str
    closing: bool = False
    number: int = 0

    @property
    def canonical(self) -> str:
        """The marker written in its canonical form, e.g. ``<!-- tunaflow:subtask-done:3 -->``."""
        slash = "/" if self.closing else ""
        suffix = f":{self.number}" if self.kind == "subtask-done" else ""
        if self.kind == "plan-proposal" and self.number:
            suffix = f" {REVISES}: #{self.number}"
        return f"<!-- {slash}tunaflow:{self.kind}{suffix} -->"


def iter_tunaflow_comments(text: str) -> Iterator[tuple[int, int, str]]:
    """Yield ``(start, end, compact_body)`` for every ``<!-- ... -->`` whose body names tunaflow.

    ``compact_body`` is the body with all whitespace removed and case folded, so
    ``<!--  TunaFlow : subtask-done : 3 -->`` gives ``"tunaflow:subtask-done:3"``. Well-formed or not.
    """
    search = _CANDIDATE.search  # the other comments cannot name tunaflow
    found = search(text)
    while found is not None:
        compact = "".join((found[1] or found[2]).split()).casefold()
        if compact.startswith(_PREFIXES):
            yield found.start(), found.end(), compact
            found = search(text, found.end())
        else:
            found = search(text, found.start() + 1)  # a comment may start inside this one


def _positive(digits: str) -> int:
    """``digits`` as a number 1–999999, or 0 when it is anything else (empty, too long, not ASCII digits)."""
    if 0 < len(digits) <= 6 and digits.isascii() and digits.isdigit():
        return int(digits)
    return 0


def classify(compact: str) -> tuple[str, bool, int] | None:
    """Turn a compact comment body into ``(kind, closing, index)``, or None if it is not a marker.

    The index is N of ``subtask-done:N`` (``#`` allowed before it) or of ``plan-proposal revises: #N``
    (the ``#`` required, nothing after N): an opening proposal that names any other suffix is no marker.
    """
    closing = compact.startswith("/")
    rest = compact[len("/tunaflow:") :] if closing else compact[len("tunaflow:") :]
    rest = rest.replace("_", "-")
    if rest in BLOCK_KINDS:
        return rest, closing, 0
    if closing:
        return None
    if rest == "impl-complete":
        return rest, False, 0
    if rest.startswith("subtask-done:"):
        number = _positive(rest[len("subtask-done:") :].lstrip("#"))
        return ("subtask-done", False, number) if number else None
    if rest.startswith(_REVISING):
        number = _positive(rest[len(_REVISING) :])
        return ("plan-proposal", False, number) if number else None
    return None


_UNSEEN: Final[tuple[str, bool, int]] = ("", False, -1)
_OTHER: Final[tuple[str, bool, int]] = ("", False, -2)
"""The shape of a comment that does not name tunaflow."""

_SHAPES: Final[dict[str, tuple[str, bool, int] | None]] = {
    f"{slash}tunaflow:{kind}": (kind, bool(slash), 0)
    for kind in (*BLOCK_KINDS, "impl-complete")
    for slash in ("", "/")
    if not (slash and kind == "impl-complete")
}


def find_marker_comments(text: str) -> list[MarkerComment]:
    """Every well-formed marker comment in ``text``, in order (quoted ones included).

    The same comments as :func:`iter_tunaflow_comments` finds, in one loop: a comment whose body
    cannot start with ``tunaflow`` is passed over by the regular expression, and each distinct body
    (as written, then compacted) is read once. The matches come from one ``finditer`` run, restarted
    only past a comment that names something else (a marker may start inside it).
    """
    found: list[MarkerComment] = []
    append = found.append
    make = tuple.__new__  # MarkerComment's own __new__ is a Python function: a reply holds thousands
    shapes: dict[str, tuple[str, bool, int] | None] = dict(_SHAPES)
    bodies: dict[str, tuple[str, bool, int] | None] = {}  # a body as written -> its shape, or _OTHER
    finditer = _CANDIDATE.finditer
    pos = 0
    while pos >= 0:
        restart = -1
        for match in finditer(text, pos):
            body = match[1] or match[2]
            shape = bodies.get(body, _UNSEEN)
            if shape is _UNSEEN:
                compact = "".join(body.split()).casefold()
                if not compact.startswith(_PREFIXES):
                    shape = _OTHER
                else:
                    shape = shapes.get(compact, _UNSEEN)
                    if shape is _UNSEEN:
                        shape = shapes[compact] = classify(compact)
                bodies[body] = shape
            if shape is _OTHER:
                restart = match.start() + 1  # a comment may start inside this one
                break
            if shape is not None:
                append(make(MarkerComment, match.span() + shape))
        pos = restart
    return found


def remove_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """Replace sorted, non-overlapping ``(start, end, replacement)`` spans in ``text``.

    An empty replacement that leaves its lines blank removes those lines too, so removed markers
    don't leave holes in the message. Only the blanks next to a span are looked at (never before the
    end of the previous edit), so many spans on one long line stay linear.
    """
    out: list[str] = []
    append = out.append
    pos = 0
    rest_of_line = _REST_OF_LINE.match
    for start, end, replacement in spans:
        if start <= pos:  # (a span overlapping or touching the previous one: rare)
            if not replacement and (start == 0 or text[start - 1] == "\n"):
                rest = rest_of_line(text, end)
                if rest is not None:
                    end = rest.end()
            if end > pos:
                if replacement:
                    append(replacement)
                pos = end
            continue
        kept = text[pos:start]
        if not replacement:  # widen to whole lines if only blanks share them with the span
            left = pos + len(kept.rstrip(" \t"))
            if left == 0 or text[left - 1] == "\n":
                rest = rest_of_line(text, end)
                if rest is not None:
                    start, end = left, rest.end()
                    kept = kept[: left - pos]
        if end <= start:
            continue
        append(kept)
        if replacement:
            append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _scrub_once(text: str) -> str:
    spans = [(start, end, "") for start, end, _ in iter_tunaflow_comments(text)]
    return remove_spans(text, spans) if spans else text


def scrub_markers(text: str) -> str:
    """Remove every tunaflow marker comment from ``text`` (quoted or not, well-formed or not).

    Used for files written to disk, so a plan document never carries a live marker. Removing a
    comment can join its neighbours into a new one (``<!-<!--x-->- tunaflow:...``); a few passes
    catch that, and whatever is left after them is made inert by escaping its ``<``. Total and
    linear: never raises on any ``str``.
    """
    return _scrub(text, _SCRUB_PASSES)


def scrub_known(text: str, comments: list[tuple[int, int]]) -> str:
    """:func:`scrub_markers` of ``text``, told the ``(start, end)`` of marker comments in it, in order.

    When they are all the comments ``text`` holds (as many as its ``<!--``), its first pass removes
    them without looking for them; else ``text`` is scrubbed as any other.
    """
    if not comments or text.count("<!--") != len(comments):
        return _scrub(text, _SCRUB_PASSES)
    return _scrub(remove_spans(text, [(start, end, "") for start, end in comments]), _SCRUB_PASSES - 1)


def _scrub(text: str, passes: int) -> str:
    """:func:`scrub_markers` with at most ``passes`` passes of removal."""
    if "<!--" not in text:  # no comment, nothing to remove (a block's body, usually)
        return text
    for _ in range(passes):
        scrubbed = _scrub_once(text)
        if scrubbed == text:
            return text
        text = scrubbed
    spans = [(start, start + 1, "&lt;") for start, _, _ in iter_tunaflow_comments(text)]
    return remove_spans(text, spans) if spans else text
