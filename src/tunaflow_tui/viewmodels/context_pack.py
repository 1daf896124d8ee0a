"""What the context pack view shows: each section's tokens, budget, what was cut, and its text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tunaflow_tui.core.terminal_text import neutralize

if TYPE_CHECKING:
    from tunaflow_tui.runtime.context import ContextPack

NO_TEXT = "(empty: nothing to put in this section)"


@dataclass(frozen=True, slots=True)
class PackRowView:
    """One line of the table: a section (or the persona, or the request) and its text."""

    name: str
    tokens: int
    budget: int | None
    cut: str
    """``""``, ``"142 tokens"`` cut to fit, or ``"all"`` when nothing of it fitted."""
    text: str


@dataclass(frozen=True, slots=True)
class LinkChoice:
    """A linked session the pack's conversation cites, which the user may drop."""

    link_id: int
    label: str


@dataclass(frozen=True, slots=True)
class PackView:
    """One pack as the view shows it: for the turn about to be sent, or the last one sent."""

    title: str
    intro: str
    rows: tuple[PackRowView, ...]
    total: int
    budget: int
    conversation_id: str = "main"
    links: tuple[LinkChoice, ...] = ()
    """The links the conversation's next turns cite (as they are now, for the last turn's pack too)."""


def _cut(truncated: bool, cut_tokens: int, kept: str) -> str:
    if not truncated:
        return ""
    return "all" if not kept.strip() else f"{cut_tokens:,} tokens"


PROMPT_ROW = "whole prompt"
"""The last row: the exact text the turn sends (or sent), every section and the request together."""


def pack_view(title: str, intro: str, pack: ContextPack, persona: str, persona_budget: int | None, *,
              conversation_id: str = "main", links: tuple[LinkChoice, ...] = (), prompt: str | None = None,
              ) -> PackView:
    """The view of ``pack``; ``persona`` is the system prompt it travels with (counted in the total).

    ``prompt`` is the exact text sent with it (by default the pack rendered), shown as the last row.
    """
    rows = [PackRowView("persona", pack.system_tokens, persona_budget, "", neutralize(persona))]
    for section in pack.sections:
        rows.append(PackRowView(section.name, section.tokens, section.budget,
                                _cut(section.truncated, section.cut_tokens, section.text),
                                neutralize(section.text) or NO_TEXT))
    rows.append(PackRowView("request", pack.request_tokens, None, "", neutralize(pack.request) or NO_TEXT))
    whole = pack.render() if prompt is None else prompt
    rows.append(PackRowView(PROMPT_ROW, pack.total_tokens - pack.system_tokens, None, "",
                            neutralize(whole).strip() or NO_TEXT))
    links = tuple(LinkChoice(link.link_id, neutralize(link.label)) for link in links)
    return PackView(title, intro, tuple(rows), pack.total_tokens, pack.budget, conversation_id, links)
