"""Who sits at a roundtable: seats, their roles with guidance, output limits, and the set-up.

A seat is one participant: its own name, engine, model, role, blind flag and output limit. Roles
come with guidance that goes into the seat's prompt (spec §5): a **proposer** states its conclusion
first, a **critic** scores the four rubric dimensions, a **judge** decides independently of the
others, a **synthesizer** writes consensus / contested / dissent inside the consensus marker. Any
other role is *custom*: its text is the guidance.

``parse_seat_spec`` reads the command line's ``NAME=ENGINE[:ROLE][:blind]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

PROPOSER = "proposer"
CRITIC = "critic"
JUDGE = "judge"
SYNTHESIZER = "synthesizer"
CUSTOM = "custom"

KNOWN_ROLES: tuple[str, ...] = (PROPOSER, CRITIC, JUDGE, SYNTHESIZER)
"""The roles with built-in guidance; anything else is a custom role."""

ROLE_ALIASES: Mapping[str, str] = {
    "proposer": PROPOSER, "critic": CRITIC, "reviewer": CRITIC, "judge": JUDGE, "verifier": JUDGE,
    "synthesizer": SYNTHESIZER, "synthesiser": SYNTHESIZER, "lead": SYNTHESIZER,
}
"""Names a user may type for a built-in role (spec §5 names reviewer/critic, verifier/judge, synthesizer/lead)."""

RUBRIC: tuple[str, ...] = ("plan_coverage", "code_quality", "test_coverage", "convention")
"""The four dimensions a critic scores (the review rubric)."""

CONSENSUS_FORMAT = """<!-- tunaflow:consensus -->
consensus:
- <a point every participant supports>
contested:
- <a point still in dispute, with the positions>
dissent:
- <participant>: <their minority position, in one sentence>
<!-- /tunaflow:consensus -->"""

ROLE_GUIDANCE: Mapping[str, str] = {
    PROPOSER: ("State your conclusion first, in your first two sentences, then give your reasons. "
               "Be concrete: name the modules, data and steps you propose."),
    CRITIC: ("Evaluate the proposals on the four rubric dimensions — " + ", ".join(RUBRIC) + " — with a "
             "score from 1 to 5 and one line of reason each. State your overall judgement in your first "
             "two sentences, then the scores, then the most important change you ask for."),
    JUDGE: ("Judge independently: form your own assessment from the topic and the evidence, and do not "
            "defer to the other participants' opinions or scores. State your verdict in your first two "
            "sentences, then your reasons."),
    SYNTHESIZER: ("Weigh what the participants said; add no opinion of your own. State the overall outcome "
                  "in your first two sentences, then wrap your synthesis in these markers, each on its own "
                  "line, leaving out a section that would be empty:\n\n" + CONSENSUS_FORMAT),
}
"""Guidance put into a seat's prompt for each built-in role."""

DEFAULT_OUTPUT_LIMITS: Mapping[str, int] = {PROPOSER: 800, CRITIC: 600, JUDGE: 500, SYNTHESIZER: 900, CUSTOM: 800}
"""Approximate output tokens asked of each role when the seat names no limit."""

MIN_OUTPUT_LIMIT = 50
MAX_OUTPUT_LIMIT = 32_000
MAX_NAME_CHARS = 40
MAX_ROLE_TEXT_CHARS = 500
_NAME = re.compile(r"[^\W][\w.\-]*")

MODES: tuple[str, ...] = ("sequential", "deliberative")
"""How a round runs: one seat after another, or all at once."""


class SeatSpecError(ValueError):
    """A seat or a set-up that cannot be used; the message says what is wrong, in one line."""


def normalize_role(text: str) -> tuple[str, str]:
    """``(role, custom_text)``: a built-in role (aliases folded) with no text, or ``custom`` with the text."""
    cleaned = " ".join(text.split())
    key = cleaned.casefold()
    if key in ROLE_ALIASES:
        return ROLE_ALIASES[key], ""
    if not cleaned:
        return PROPOSER, ""
    if len(cleaned) > MAX_ROLE_TEXT_CHARS:
        raise SeatSpecError(f"a custom role is at most {MAX_ROLE_TEXT_CHARS} characters")
    return CUSTOM, cleaned


@dataclass(frozen=True, slots=True)
class Seat:
    """One participant of a roundtable."""

    name: str
    engine: str
    role: str = PROPOSER
    """A built-in role (:data:`KNOWN_ROLES`) or ``custom``."""
    role_text: str = ""
    """The guidance of a custom role (empty for built-in roles)."""
    blind: bool = False
    model: str = ""
    """A model for this seat only (empty: the engine's configured model)."""
    output_limit: int | None = None
    """Approximate output tokens (None: the role's default)."""

    def __post_init__(self) -> None:
        check_name(self.name)
        if not self.engine.strip():
            raise SeatSpecError(f"seat {self.name!r} names no engine")
        if self.role not in (*KNOWN_ROLES, CUSTOM):
            raise SeatSpecError(f"seat {self.name!r}: unknown role {self.role!r}")
        if self.role == CUSTOM and not self.role_text.strip():
            raise SeatSpecError(f"seat {self.name!r}: a custom role needs its text")
        if self.output_limit is not None and not MIN_OUTPUT_LIMIT <= self.output_limit <= MAX_OUTPUT_LIMIT:
            raise SeatSpecError(f"seat {self.name!r}: the output limit must be between {MIN_OUTPUT_LIMIT} "
                                f"and {MAX_OUTPUT_LIMIT} tokens")

    @property
    def limit(self) -> int:
        """The output limit the prompt states."""
        return self.output_limit if self.output_limit is not None else DEFAULT_OUTPUT_LIMITS[self.role]

    @property
    def guidance(self) -> str:
        """What the prompt tells this seat to do in its role."""
        return self.role_text if self.role == CUSTOM else ROLE_GUIDANCE[self.role]

    @property
    def role_label(self) -> str:
        """The role as shown to people: ``critic``, or the custom role's text (shortened)."""
        if self.role != CUSTOM:
            return self.role
        return self.role_text if len(self.role_text) <= 40 else self.role_text[:39] + "…"

    @property
    def persona(self) -> str:
        """The persona its answers are stored under: the role, which scopes the markers it may emit."""
        return self.role if self.role != CUSTOM else "roundtable"

    def to_json(self) -> dict[str, Any]:
        """The seat as stored and as ``--json`` prints it."""
        return {"name": self.name, "engine": self.engine, "role": self.role, "role_text": self.role_text,
                "blind": self.blind, "model": self.model, "output_limit": self.limit,
                "output_limit_given": self.output_limit is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Seat:
        """A seat from :meth:`to_json`."""
        return cls(name=str(data["name"]), engine=str(data["engine"]), role=str(data.get("role") or PROPOSER),
                   role_text=str(data.get("role_text") or ""), blind=bool(data.get("blind")),
                   model=str(data.get("model") or ""),
                   output_limit=int(data["output_limit"]) if data.get("output_limit_given") else None)


def check_name(name: str) -> None:
    """Raise :class:`SeatSpecError` unless ``name`` is a usable seat name (a word; letters, digits, ``.-_``)."""
    if not name:
        raise SeatSpecError("a seat needs a name (NAME=ENGINE)")
    if len(name) > MAX_NAME_CHARS:
        raise SeatSpecError(f"seat name {name[:MAX_NAME_CHARS]!r}… is longer than {MAX_NAME_CHARS} characters")
    if not _NAME.fullmatch(name):
        raise SeatSpecError(f"seat name {name!r} may hold only letters, digits, '.', '-' and '_'")


def parse_seat_spec(spec: str) -> Seat:
    """A seat from ``NAME=ENGINE[:ROLE][:blind]`` (the role may be custom text; ``blind`` is last)."""
    name, sep, rest = spec.partition("=")
    name = name.strip()
    if not sep:
        raise SeatSpecError(f"bad seat {spec!r}: write NAME=ENGINE[:ROLE][:blind]")
    parts = [part.strip() for part in rest.split(":")]
    engine = parts[0]
    if not engine:
        raise SeatSpecError(f"bad seat {spec!r}: no engine after '='")
    blind = False
    if len(parts) > 1 and parts[-1].casefold() == "blind":
        blind = True
        parts = parts[:-1]
    if len(parts) > 2:
        raise SeatSpecError(f"bad seat {spec!r}: write NAME=ENGINE[:ROLE][:blind] (a role cannot contain ':')")
    role, text = normalize_role(parts[1] if len(parts) == 2 else "")
    if len(parts) == 2 and not parts[1]:
        raise SeatSpecError(f"bad seat {spec!r}: empty role")
    return Seat(name=name, engine=engine, role=role, role_text=text, blind=blind)


@dataclass(frozen=True, slots=True)
class RoundtableSetup:
    """What a roundtable discusses and how: the topic, the seats in speaking order, the mode."""

    topic: str
    seats: tuple[Seat, ...]
    mode: str = "sequential"
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.topic.strip():
            raise SeatSpecError("the topic is empty")
        if self.mode not in MODES:
            raise SeatSpecError(f"unknown mode {self.mode!r}: use sequential or deliberative")
        check_unique(self.seats)

    def with_seats(self, seats: Sequence[Seat]) -> RoundtableSetup:
        """The same set-up with another line-up."""
        return replace(self, seats=tuple(seats))

    def seat(self, name: str) -> Seat:
        """The seat called ``name`` (case-insensitive); SeatSpecError when there is none."""
        for seat in self.seats:
            if seat.name.casefold() == name.casefold():
                return seat
        raise SeatSpecError(f"there is no seat {name!r} (seats: {', '.join(s.name for s in self.seats)})")

    def to_json(self) -> dict[str, Any]:
        """The set-up as stored in the roundtable's ``roundtable_setup`` memo."""
        return {"topic": self.topic, "mode": self.mode, "seats": [seat.to_json() for seat in self.seats]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RoundtableSetup:
        """A set-up from :meth:`to_json`."""
        return cls(topic=str(data["topic"]), mode=str(data.get("mode") or "sequential"),
                   seats=tuple(Seat.from_json(seat) for seat in data.get("seats") or ()))


def check_unique(seats: Sequence[Seat]) -> None:
    """Raise :class:`SeatSpecError` when there is no seat or two seats share a name."""
    if not seats:
        raise SeatSpecError("a roundtable needs at least one seat (--seat NAME=ENGINE)")
    seen: set[str] = set()
    for seat in seats:
        key = seat.name.casefold()
        if key in seen:
            raise SeatSpecError(f"two seats are called {seat.name!r}; give each seat its own name")
        seen.add(key)
