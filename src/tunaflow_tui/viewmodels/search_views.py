"""What the search view shows: hits as plain, immutable data (no ORM rows, no terminal control text).

A hit says where the message lives (the main conversation or a branch, by label), who wrote it,
when, and a snippet with the matched words between ``«`` and ``»`` (as the message's Markdown has it;
:func:`~tunaflow_tui.core.snippet_text.snippet_runs` turns it into styled runs, markers removed).
Hits whose messages say the same thing are one hit that counts the others (``alike``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from tunaflow_tui.core.snippet_text import group_alike
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.viewmodels.glyphs import BRANCH

if TYPE_CHECKING:
    from tunaflow_tui.core.memory.project_search import ProjectHit, SearchResult

MAIN_CONVERSATION = "main"


@dataclass(frozen=True, slots=True)
class SearchHitView:
    """One message found, as the search view lists it."""

    message_id: int
    conversation_id: str
    where: str
    """``Main`` or ``↳ {branch label}`` (:data:`~tunaflow_tui.viewmodels.glyphs.BRANCH`)."""
    speaker: str
    when: str
    snippet: str
    """The matching text on one line, matched words between ``«`` and ``»``."""
    alike: tuple[int, ...] = ()
    """Later hits whose messages say the same thing (a roundtable's seats often agree), by message id."""

    @property
    def branch_id(self) -> int | None:
        """The branch the message belongs to, None for the main conversation."""
        prefix, _, number = self.conversation_id.partition(":")
        return int(number) if prefix == "branch" and number.isdigit() else None


@dataclass(frozen=True, slots=True)
class SearchResultsView:
    """The hits for one query, best first, and a note when the search could not use meaning."""

    query: str
    hits: tuple[SearchHitView, ...]
    mode: str
    note: str = ""
    error: str = ""


SearchFunction = Callable[[str], SearchResultsView]
"""Runs one search (on a worker thread: it may load the embedding model)."""


def when_text(moment: datetime, now: datetime) -> str:
    """``14:03`` today, ``Nov 28 14:03`` this year, else ``2025-11-28``."""
    if moment.date() == now.date():
        return f"{moment:%H:%M}"
    if moment.year == now.year:
        return f"{moment:%b} {moment.day} {moment:%H:%M}"
    return f"{moment:%Y-%m-%d}"


def one_line(text: str) -> str:
    """Text on one line, terminal control sequences made inert."""
    return " ".join(neutralize(text).split())


def hit_view(hit: ProjectHit, branch_labels: Mapping[int, str], now: datetime,
             speaker: Callable[[ProjectHit], str]) -> SearchHitView:
    """How the search view lists ``hit``; ``branch_labels`` names the branches by id."""
    branch = hit.branch_id
    label = branch_labels.get(branch, f"branch {branch}") if branch is not None else ""
    where = "Main" if branch is None else f"{BRANCH} {one_line(label)}"
    return SearchHitView(
        message_id=hit.message.id,
        conversation_id=hit.conversation_id,
        where=where,
        speaker=one_line(speaker(hit)),
        when=when_text(hit.created_at.astimezone(now.tzinfo), now),
        snippet=one_line(hit.snippet),
    )


def results_view(query: str, result: SearchResult, branch_labels: Mapping[int, str], now: datetime,
                 speaker: Callable[[ProjectHit], str]) -> SearchResultsView:
    """The search view's data for ``result``."""
    groups = group_alike(result.hits, lambda hit: hit.message.content)
    views = [replace(hit_view(hit, branch_labels, now, speaker), alike=tuple(other.message.id for other in alike))
             for hit, alike in groups]
    return SearchResultsView(
        query=query,
        hits=tuple(views),
        mode=result.mode,
        note=one_line(result.note),
    )
