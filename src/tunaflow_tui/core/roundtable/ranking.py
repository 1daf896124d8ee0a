"""The anonymous peer-ranking round: letters per voter, reading the rankings, the Borda count.

Each voter sees the other seats' latest answers under the letters A, B, C… (after Z: AA, AB…, so
a table of any size puts every answer on every ballot), shuffled anew for every voter, and never its
own answer. It answers one line per letter, best first, each with a reason. A ranking that does not
place every letter exactly once is not counted (the voter is left out and the result says so).
Borda: on a ballot of n answers, first place scores n, last 1 — every place counts, so in a table of
two seats each answer ranked by the other seat scores a point rather than nothing.
Which letter meant which seat is kept for the user; no seat is ever told.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

_LINE = re.compile(
    r"^\s*(?:\d+\s*[.):-]\s*)?[*_`\"'(\[]*(?:answer\s+)?([A-Z]{1,3})\b[*_`\"')\]]*\s*[-—–:.)]?\s*(.*)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Ballot:
    """One voter's letters: ``labels[letter] = seat``, in the order the voter was shown them."""

    voter: str
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class RankedLine:
    """One place of a ranking: the seat, its letter for this voter, and the voter's reason."""

    seat: str
    label: str
    reason: str


@dataclass(frozen=True, slots=True)
class RankingResult:
    """The Borda totals (best first), the rankings counted, and the voters left out with why."""

    scores: tuple[tuple[str, int], ...]
    rankings: Mapping[str, tuple[RankedLine, ...]]
    left_out: Mapping[str, str]
    ballots: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Voter → letter → seat: revealed to the user only."""

    def to_json(self) -> dict[str, object]:
        """The result as stored and as ``--json`` prints it."""
        return {
            "scores": [{"seat": seat, "points": points} for seat, points in self.scores],
            "rankings": {voter: [{"place": i, "seat": line.seat, "label": line.label, "reason": line.reason}
                                 for i, line in enumerate(lines, 1)] for voter, lines in self.rankings.items()},
            "left_out": dict(self.left_out),
            "labels": {voter: dict(labels) for voter, labels in self.ballots.items()},
        }


def ballot_labels() -> Iterator[str]:
    """The ballot letters in order: A … Z, then AA, AB … AZ, BA … ZZ, AAA … (as spreadsheet columns)."""
    number = 1
    while True:
        label, rest = "", number
        while rest:
            rest, digit = divmod(rest - 1, 26)
            label = string.ascii_uppercase[digit] + label
        yield label
        number += 1


def make_ballots(answers: Mapping[str, str], rng: random.Random) -> tuple[Ballot, ...]:
    """A ballot per seat with an answer: the others' seats under fresh letters, in a random order each."""
    ballots = []
    for voter in answers:
        others = [seat for seat in answers if seat != voter]
        rng.shuffle(others)
        ballots.append(Ballot(voter, dict(zip(ballot_labels(), others, strict=False))))
    return tuple(ballots)


def parse_ranking(text: str, labels: Sequence[str]) -> tuple[tuple[str, str], ...] | None:
    """``(label, reason)`` best first, when ``text`` ranks every label exactly once; None otherwise."""
    wanted = {label.upper() for label in labels}
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        label = match.group(1).upper()
        if label not in wanted:
            continue
        if any(label == seen for seen, _reason in found):
            return None
        found.append((label, match.group(2).strip()))
    return tuple(found) if {label for label, _r in found} == wanted else None


def borda(rankings: Mapping[str, Sequence[str]], seats: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """Borda totals over ``rankings`` (voter → seats best first; n places score n … 1); every seat listed,
    best first, ties by name."""
    points = dict.fromkeys(seats, 0)
    for ranked in rankings.values():
        size = len(ranked)
        for place, seat in enumerate(ranked):
            points[seat] = points.get(seat, 0) + size - place
    return tuple(sorted(points.items(), key=lambda item: (-item[1], item[0].casefold())))
