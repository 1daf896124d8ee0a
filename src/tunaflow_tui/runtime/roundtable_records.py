"""What a roundtable reports while it runs, and its stored answers read back as plain records.

Every answer a seat gives is a message in the roundtable branch's shadow conversation; its
``meta`` says which seat and round it answers and what the seat was sent (``prompt``, its token
count, whether earlier rounds were compressed, whom it responds to). A user's message between
rounds is a user message there too, with a round of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tunaflow_tui.core.storage.records import MessageRecord

ANSWER_KIND = "roundtable_answer"
USER_KIND = "roundtable_user"
TOPIC_KIND = "roundtable_topic"
RANKING_KIND = "roundtable_ranking"
SETUP_MEMO_KIND = "roundtable_setup"
RANKING_MEMO_KIND = "roundtable_ranking"


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, (list, tuple)) else ()


@dataclass(frozen=True, slots=True)
class SeatAnswer:
    """One stored answer of a seat in a round (or its failure: ``message.status`` says which)."""

    message: MessageRecord

    @property
    def meta(self) -> Mapping[str, object]:
        """The answer's stored data."""
        return self.message.meta

    @property
    def seat(self) -> str:
        """The seat's name."""
        return str(self.meta.get("seat", ""))

    @property
    def round(self) -> int:
        """The round it answers (1-based)."""
        value = self.meta.get("round", 0)
        return int(value) if isinstance(value, (int, str)) else 0

    @property
    def role(self) -> str:
        """The seat's role label when it answered."""
        return str(self.meta.get("role_label") or self.meta.get("role") or "")

    @property
    def ok(self) -> bool:
        """True for a finished answer with text."""
        return self.message.status == "done" and bool(self.message.content.strip())

    @property
    def prompt(self) -> str:
        """Exactly what the seat was sent."""
        return str(self.meta.get("prompt", ""))

    @property
    def context_tokens(self) -> int:
        """Tokens of what the seat was sent."""
        value = self.meta.get("context_tokens", 0)
        return int(value) if isinstance(value, (int, str)) else 0

    @property
    def compressed(self) -> bool:
        """Whether earlier rounds reached the seat as selected excerpts (not the full transcript)."""
        return bool(self.meta.get("compressed"))

    @property
    def responds_to(self) -> tuple[str, ...]:
        """Earlier speakers this answer names or quotes."""
        return _strings(self.meta.get("responds_to"))

    @property
    def error(self) -> str:
        """Why the seat failed (empty for an answer)."""
        if self.ok:
            return ""
        if self.message.status == "done":
            return "the answer is empty"
        return (self.message.error_message or self.message.error_kind or self.message.status).splitlines()[0]

    def to_json(self) -> dict[str, object]:
        """The answer as ``tunaflow roundtable --json`` prints it."""
        usage = self.message.usage
        return {
            "seat": self.seat, "round": self.round, "role": self.role, "message_id": self.message.id,
            "engine": self.message.engine, "model": self.message.model, "status": self.message.status,
            "error_kind": self.message.error_kind, "error": self.error or None,
            "text": self.message.display_text, "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens, "cost_usd": usage.cost_usd,
            "context": self.prompt, "context_tokens": self.context_tokens, "compressed": self.compressed,
            "responds_to": list(self.responds_to),
        }


@dataclass(frozen=True, slots=True)
class RoundResult:
    """How a round of the seats went."""

    round: int
    answers: tuple[SeatAnswer, ...]
    compressed: bool
    """Whether earlier rounds were compressed for this round's seats (False in round 1)."""
    stopped: bool = False
    """The user stopped the discussion during this round (seats still to speak did not)."""

    @property
    def failed(self) -> tuple[SeatAnswer, ...]:
        """Answers that are failures (missing CLI, 401, timeout, crash, cancelled)."""
        return tuple(answer for answer in self.answers if not answer.ok)


# --------------------------------------------------------------------------- events
@dataclass(frozen=True, slots=True)
class RoundStarted:
    """A round of the seats began."""

    round: int
    mode: str
    seats: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SeatStarted:
    """A seat was sent its prompt."""

    round: int
    seat: str
    engine: str
    context_tokens: int
    compressed: bool


@dataclass(frozen=True, slots=True)
class SeatFinished:
    """A seat's answer is stored (or its failure)."""

    round: int
    answer: SeatAnswer


@dataclass(frozen=True, slots=True)
class RoundFinished:
    """A round is over: every seat answered, failed, or was stopped."""

    result: RoundResult


@dataclass(frozen=True, slots=True)
class RoundtableNotice:
    """Something the user should know that ends nothing (e.g. no embedding model: full transcripts)."""

    text: str
    level: str = "info"


@dataclass(frozen=True, slots=True)
class RankingFinished:
    """The peer-ranking round is over."""

    scores: tuple[tuple[str, int], ...]
    left_out: Mapping[str, str] = field(default_factory=dict)


RoundtableEvent = RoundStarted | SeatStarted | SeatFinished | RoundFinished | RoundtableNotice | RankingFinished
RoundtableObserver = Callable[[RoundtableEvent], None]
