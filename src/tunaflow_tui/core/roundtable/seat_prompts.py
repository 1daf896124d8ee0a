"""What each seat of a roundtable is sent: one prompt, assembled from plain parts.

The prompt opens with the output limit (``[Output limit: Keep your response under approximately N
tokens.]``), then the seat's identity and role guidance. A **blind** seat gets only that, the topic
and the moderator's latest message: no project context, no earlier rounds, no other answer. Any
other seat also gets the minimal project context (name, path, active plan: about 100–200 tokens),
what it may know of earlier rounds (the most relevant excerpts, or the full transcript when no
embedding model is available), and — in sequential mode — this round's earlier answers in full.

Everything here is pure: the runtime gathers the parts and records the result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tunaflow_tui.core.roundtable.seats import Seat

OUTPUT_LIMIT_LINE = "[Output limit: Keep your response under approximately {limit} tokens.]"


@dataclass(frozen=True, slots=True)
class SpokenAnswer:
    """An answer another seat gave, as a later seat may read it."""

    speaker: str
    role: str
    round: int
    text: str


@dataclass(frozen=True, slots=True)
class EarlierRounds:
    """What a seat is told of the rounds before this one.

    ``compressed``: ``text`` holds the selected excerpts, each labelled with speaker and round;
    otherwise it is the full transcript.
    """

    text: str
    compressed: bool


@dataclass(frozen=True, slots=True)
class PromptParts:
    """Everything a seat's prompt may contain; the seat's blindness decides what is used."""

    topic: str
    round: int
    participants: tuple[str, ...]
    project_context: str = ""
    earlier: EarlierRounds | None = None
    moderator: str = ""
    """The user's message since the previous round (seen by every seat, blind ones too)."""
    this_round: tuple[SpokenAnswer, ...] = ()
    """Answers given earlier in this round (sequential mode)."""


def output_limit_line(limit: int) -> str:
    """The line that heads every prompt."""
    return OUTPUT_LIMIT_LINE.format(limit=limit)


def _identity(seat: Seat, parts: PromptParts) -> str:
    others = [name for name in parts.participants if name != seat.name]
    among = f" with {', '.join(others)}" if others and not seat.blind else ""
    lines = [f"You are {seat.name}, a participant in a roundtable discussion{among} (round {parts.round}).",
             f"Your role: {seat.role_label}.", seat.guidance]
    if seat.blind:
        lines.append("You answer independently: you are not shown the other participants' answers.")
    lines.append("Do not edit any file; answer in prose.")
    return "\n".join(lines)


def render_answer(answer: SpokenAnswer) -> str:
    """One answer as a later seat reads it, under its speaker's name and role."""
    return f"### {answer.speaker} ({answer.role}), round {answer.round}\n{answer.text.strip()}"


def build_seat_prompt(seat: Seat, parts: PromptParts) -> str:
    """The full prompt of ``seat`` for one round (see the module docstring for what a seat sees)."""
    sections = [output_limit_line(seat.limit), _identity(seat, parts)]
    if not seat.blind and parts.project_context.strip():
        sections.append("## Project\n" + parts.project_context.strip())
    sections.append("## Topic\n" + parts.topic.strip())
    if not seat.blind and parts.earlier is not None and parts.earlier.text.strip():
        heading = ("## Earlier rounds (the most relevant excerpts)" if parts.earlier.compressed
                   else "## Earlier rounds")
        sections.append(f"{heading}\n{parts.earlier.text.strip()}")
    if parts.moderator.strip():
        sections.append("## The moderator (the user) says\n" + parts.moderator.strip())
    if not seat.blind and parts.this_round:
        sections.append("## This round so far\n" + "\n\n".join(render_answer(a) for a in parts.this_round))
    sections.append(f"Give your answer now, as {seat.name}.")
    return "\n\n".join(sections)


def full_transcript(answers: Sequence[SpokenAnswer], moderator_turns: Sequence[tuple[int, str]] = ()) -> str:
    """Earlier rounds in full, in round order: every answer, and the moderator's messages."""
    items: list[tuple[int, int, str]] = [(number, 0, f"### The moderator (the user), round {number}\n{text.strip()}")
                                         for number, text in moderator_turns]
    items += [(answer.round, 1 + i, render_answer(answer)) for i, answer in enumerate(answers)]
    return "\n\n".join(text for _round, _order, text in sorted(items, key=lambda item: (item[0], item[1])))


RANKING_REQUEST = "Rank the other participants' answers on this topic, best first."
_ANSWER_HEADING = re.compile(r"^### Answer ([A-Z]{1,3})$", re.M)


def ballot_letters(prompt: str) -> list[str] | None:
    """The letters a :func:`ranking_prompt` asks to rank, in the order shown; None for any other prompt."""
    if RANKING_REQUEST not in prompt:
        return None
    return _ANSWER_HEADING.findall(prompt) or None


def ranking_prompt(seat: Seat, topic: str, labelled: Sequence[tuple[str, str]]) -> str:
    """The prompt of the anonymous peer-ranking round: ``labelled`` is ``(label, answer)`` pairs.

    The answers carry letters only — never a speaker's name — and the seat's own answer is not among them.
    """
    letters = ", ".join(label for label, _text in labelled)
    answers = "\n\n".join(f"### Answer {label}\n{text.strip()}" for label, text in labelled)
    example = "\n".join(f"{i}. {label} — <one line: why this place>" for i, (label, _t) in enumerate(labelled, 1))
    return "\n\n".join([
        output_limit_line(min(seat.limit, 300)),
        f"You are {seat.name}. {RANKING_REQUEST} "
        "They are anonymous; judge the content only.",
        "## Topic\n" + topic.strip(),
        "## Answers\n" + answers,
        f"Reply with exactly one line per answer ({letters}), best first, each with one line of reason:\n"
        + example,
    ])
