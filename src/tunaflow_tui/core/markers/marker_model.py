"""The markers an agent reply can carry, as immutable values with a JSON form."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

MarkerKind = Literal["plan-proposal", "subtask-done", "impl-complete", "review-verdict", "consensus"]
VerdictValue = Literal["pass", "fail", "conditional"]


class Scores(Mapping[str, int]):
    """A read-only, hashable ``score name -> 1..5`` mapping (compares equal to a plain dict)."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[tuple[str, int]] = ()) -> None:
        """Keep the pairs in the order given; a repeated name keeps its last value."""
        self._items: dict[str, int] = dict(items)

    def __getitem__(self, key: str) -> int:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(tuple(self._items.items()))

    def __repr__(self) -> str:
        return f"Scores({self._items!r})"


@dataclass(frozen=True, kw_only=True)
class Marker:
    """Base of every marker: whether the writer's role may emit it, and its original text.

    ``span`` is the ``(start, end)`` of the marker (whole block for block markers) in the message.
    """

    kind: ClassVar[MarkerKind]
    accepted: bool = True
    raw: str = ""
    span: tuple[int, int] = field(default=(0, 0), compare=False)

    def to_json(self) -> dict[str, Any]:
        """The JSON object `tunaflow parse` prints for this marker."""
        return {"kind": self.kind, "accepted": self.accepted}


@dataclass(frozen=True)
class Subtask:
    """One subtask of a plan proposal: 1-based position, title and the text under it."""

    index: int
    title: str
    details: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON form: ``{"index", "title", "details"}``."""
        return {"index": self.index, "title": self.title, "details": self.details}


@dataclass(frozen=True, kw_only=True)
class PlanProposal(Marker):
    """``<!-- tunaflow:plan-proposal -->`` … ``<!-- /tunaflow:plan-proposal -->`` from the Architect.

    ``revises`` is N when the opening marker reads ``<!-- tunaflow:plan-proposal revises: #N -->``
    (the proposal is a new version of plan N), else None (the runtime decides: a new plan, or the
    plan the turn was about).
    """

    kind: ClassVar[MarkerKind] = "plan-proposal"
    title: str = ""
    subtasks: tuple[Subtask, ...] = ()
    description: str = ""
    expected_outcome: str | None = None
    constraints: tuple[str, ...] = ()
    non_goals: tuple[str, ...] = ()
    closed: bool = True
    revises: int | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON form, fields in the documented order (``revises`` last, only when the marker names a plan)."""
        found = {
            **super().to_json(),
            "closed": self.closed,
            "title": self.title,
            "subtasks": [s.to_json() for s in self.subtasks],
            "description": self.description,
            "expected_outcome": self.expected_outcome,
            "constraints": list(self.constraints),
            "non_goals": list(self.non_goals),
        }
        if self.revises is not None:
            found["revises"] = self.revises
        return found


@dataclass(frozen=True, kw_only=True)
class SubtaskDone(Marker):
    """``<!-- tunaflow:subtask-done:N -->`` from the Developer: subtask N (1-based) is finished."""

    kind: ClassVar[MarkerKind] = "subtask-done"
    index: int = 0

    def to_json(self) -> dict[str, Any]:
        """JSON form: kind, accepted, index."""
        return {**super().to_json(), "index": self.index}


@dataclass(frozen=True, kw_only=True)
class ImplComplete(Marker):
    """``<!-- tunaflow:impl-complete -->`` from the Developer: implementation finished."""

    kind: ClassVar[MarkerKind] = "impl-complete"


@dataclass(frozen=True, kw_only=True)
class ReviewVerdict(Marker):
    """``<!-- tunaflow:review-verdict -->`` … block from a Reviewer or Verifier."""

    kind: ClassVar[MarkerKind] = "review-verdict"
    verdict: VerdictValue = "conditional"
    scores: Scores = field(default_factory=Scores)
    failed_subtasks: tuple[int, ...] = ()
    findings: tuple[str, ...] = ()
    recommendations: tuple[str, ...] = ()
    closed: bool = True

    def to_json(self) -> dict[str, Any]:
        """JSON form, fields in the documented order."""
        return {
            **super().to_json(),
            "closed": self.closed,
            "verdict": self.verdict,
            "scores": dict(self.scores),
            "failed_subtasks": list(self.failed_subtasks),
            "findings": list(self.findings),
            "recommendations": list(self.recommendations),
        }


@dataclass(frozen=True, kw_only=True)
class Consensus(Marker):
    """``<!-- tunaflow:consensus -->`` … block from the Synthesizer of a roundtable."""

    kind: ClassVar[MarkerKind] = "consensus"
    consensus: tuple[str, ...] = ()
    contested: tuple[str, ...] = ()
    dissent: tuple[str, ...] = ()
    closed: bool = True

    def to_json(self) -> dict[str, Any]:
        """JSON form, fields in the documented order."""
        return {
            **super().to_json(),
            "closed": self.closed,
            "consensus": list(self.consensus),
            "contested": list(self.contested),
            "dissent": list(self.dissent),
        }


_new = object.__new__


def subtask(index: int, title: str, details: str) -> Subtask:
    """``Subtask(index, title, details)``, made without the frozen dataclass's ``__init__`` (see :func:`assemble`)."""
    made = _new(Subtask)
    made.__dict__.update(index=index, title=title, details=details)
    return made


_M = TypeVar("_M", bound=Marker)


def assemble(cls: type[_M], values: dict[str, Any]) -> _M:
    """A ``cls`` marker holding ``values``: every one of its fields, in field order, each of its type.

    The same value as ``cls(**values)``, made without the generated ``__init__`` of a frozen
    dataclass (which sets each field through ``object.__setattr__``, several times slower): a dense
    reply makes thousands of markers. The caller passes every field; nothing is checked here.
    """
    marker = _new(cls)
    marker.__dict__.update(values)
    return marker


def subtask_done(index: int, accepted: bool, raw: str, span: tuple[int, int]) -> SubtaskDone:
    """``SubtaskDone(index=index, accepted=accepted, raw=raw, span=span)``, made quickly (see :func:`assemble`)."""
    marker = _new(SubtaskDone)
    marker.__dict__.update(accepted=accepted, raw=raw, span=span, index=index)
    return marker


def impl_complete(accepted: bool, raw: str, span: tuple[int, int]) -> ImplComplete:
    """``ImplComplete(accepted=accepted, raw=raw, span=span)``, made quickly (see :func:`assemble`)."""
    marker = _new(ImplComplete)
    marker.__dict__.update(accepted=accepted, raw=raw, span=span)
    return marker


@dataclass(frozen=True)
class ParseResult:
    """Everything found in one finished message: markers in order, and the text to display.

    ``display_text`` is the message with accepted markers removed and rejected ones shown as
    inert inline code.
    """

    markers: tuple[Marker, ...]
    display_text: str

    @property
    def accepted(self) -> tuple[Marker, ...]:
        """Only the markers the writer's role was allowed to emit."""
        return tuple(m for m in self.markers if m.accepted)

    @property
    def rejected(self) -> tuple[Marker, ...]:
        """Markers from a role that may not emit them (to be recorded as ``marker_rejected``)."""
        return tuple(m for m in self.markers if not m.accepted)

    def to_json(self) -> dict[str, Any]:
        """Exactly what `tunaflow parse` prints."""
        return {"markers": [m.to_json() for m in self.markers], "display_text": self.display_text}
