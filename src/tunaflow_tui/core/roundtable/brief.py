"""The brief of a roundtable, written without any model call (spec §5).

For each participant, the first two sentences (at most 300 characters) of their last answer go
under **Key Positions**; the synthesizer's consensus block, if one was given, follows. Roles are
asked to state their conclusion first, so the opening sentences are the position. Sentences are
cut at ``.``, ``!``, ``?``, ``…`` followed by a space, and at the full stops of CJK scripts; Korean
and Indonesian text end their sentences with the Latin ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tunaflow_tui.core.markers import Consensus, scrub_markers
from tunaflow_tui.core.terminal_text import neutralize

BRIEF_MEMO_KIND = "roundtable_brief"
MAX_POSITION_CHARS = 300
POSITION_SENTENCES = 2

_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)|[。！？]+[\"'”’」』)\]]*")
_LINE_MARK = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s?)")
_EMPHASIS = re.compile(r"(\*\*|__|`)")
_CODE_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1[^\n]*$", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Position:
    """A participant's last answer, for the brief."""

    speaker: str
    role: str
    text: str


def plain_text(text: str) -> str:
    """``text`` as one line of prose: markers, code blocks, list and heading marks removed."""
    text = _CODE_FENCE.sub(" ", scrub_markers(neutralize(text)))
    lines = [_LINE_MARK.sub("", line).strip() for line in text.splitlines()]
    joined = " ".join(line for line in lines if line)
    return " ".join(_EMPHASIS.sub("", joined).split())


def first_sentences(text: str, count: int = POSITION_SENTENCES, limit: int = MAX_POSITION_CHARS) -> str:
    """The first ``count`` sentences of ``text`` as prose, cut to ``limit`` characters (with …)."""
    prose = plain_text(text)
    end = 0
    for i, match in enumerate(_SENTENCE_END.finditer(prose), 1):
        end = match.end()
        if i == count:
            break
    opening = prose[:end].strip() if end else prose
    if not opening:
        opening = prose
    if len(opening) > limit:
        cut = opening[: limit - 1]
        space = cut.rfind(" ")
        opening = (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"
    return opening


def build_brief(topic: str, positions: Sequence[Position], consensus: Consensus | None) -> str:
    """The brief as Markdown: the topic, Key Positions, and the synthesizer's consensus if any."""
    lines = [f"**Roundtable:** {plain_text(topic)[:MAX_POSITION_CHARS]}", "", "## Key Positions"]
    for position in positions:
        summary = first_sentences(position.text)
        lines.append(f"- **{position.speaker}** ({position.role}): {summary or '(no answer)'}")
    if consensus is not None:
        lines += ["", "## Consensus"]
        # the section is "Consensus" already: its agreed points are "Agreed", so the word is said once
        for title, items in (("Agreed", consensus.consensus), ("Contested", consensus.contested),
                             ("Dissent", consensus.dissent)):
            if items:
                lines.append(f"**{title}**")
                lines += [f"- {plain_text(item)}" for item in items]
    return "\n".join(lines)
