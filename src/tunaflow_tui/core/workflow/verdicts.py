"""Review verdicts: one result per reviewer seat, and their aggregate (spec §3.5).

Aggregation rules: any ``fail`` → fail; every answering seat ``pass`` → pass; otherwise
``conditional``. A seat that crashed, timed out or gave no verdict is a *review error*: it is
left out of the verdict, the scores and the findings, and it is listed in ``errors`` so it can be
retried. When every seat errored the aggregate verdict is ``None``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

Verdict = Literal["pass", "fail", "conditional"]
VERDICTS: tuple[Verdict, ...] = ("pass", "fail", "conditional")

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class SeatResult:
    """What one reviewer seat (e.g. ``reviewer`` on claude, ``verifier`` on codex) reported."""

    seat: str
    engine: str
    verdict: Verdict | None
    scores: Mapping[str, int] = field(default_factory=dict)
    failed_subtasks: tuple[int, ...] = ()
    findings: tuple[str, ...] = ()
    recommendations: tuple[str, ...] = ()
    error: str | None = None

    @property
    def is_error(self) -> bool:
        """True when the seat crashed, timed out or produced no verdict (a review error, never a fail)."""
        return self.error is not None or self.verdict is None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "seat": self.seat,
            "engine": self.engine,
            "verdict": self.verdict,
            "scores": dict(self.scores),
            "failed_subtasks": list(self.failed_subtasks),
            "findings": list(self.findings),
            "recommendations": list(self.recommendations),
            "error": self.error,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SeatResult:
        """Rebuild a seat result from :meth:`to_json` output."""
        verdict = data.get("verdict")
        return cls(
            seat=str(data.get("seat", "")),
            engine=str(data.get("engine", "")),
            verdict=cast(Verdict, verdict) if verdict in VERDICTS else None,
            scores={str(k): int(v) for k, v in dict(data.get("scores") or {}).items()},
            failed_subtasks=tuple(int(i) for i in data.get("failed_subtasks") or ()),
            findings=tuple(str(f) for f in data.get("findings") or ()),
            recommendations=tuple(str(r) for r in data.get("recommendations") or ()),
            error=None if data.get("error") is None else str(data["error"]),
        )


@dataclass(frozen=True)
class ScoreSummary:
    """One rubric dimension across the seats that scored it: mean, spread (max − min) and count."""

    mean: float
    spread: int
    n: int


@dataclass(frozen=True)
class AggregateVerdict:
    """The combined result of a review round, as shown on the verdict card."""

    verdict: Verdict | None
    seats: tuple[SeatResult, ...]
    findings: tuple[str, ...]
    recommendations: tuple[str, ...]
    scores: Mapping[str, ScoreSummary]
    failed_subtasks: tuple[int, ...]
    errors: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (stored in event details and pending decisions)."""
        return {
            "verdict": self.verdict,
            "seats": [s.to_json() for s in self.seats],
            "findings": list(self.findings),
            "recommendations": list(self.recommendations),
            "scores": {k: {"mean": v.mean, "spread": v.spread, "n": v.n} for k, v in self.scores.items()},
            "failed_subtasks": list(self.failed_subtasks),
            "errors": list(self.errors),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AggregateVerdict:
        """Rebuild an aggregate from :meth:`to_json` output."""
        verdict = data.get("verdict")
        scores = {
            str(k): ScoreSummary(mean=float(v["mean"]), spread=int(v["spread"]), n=int(v["n"]))
            for k, v in dict(data.get("scores") or {}).items()
        }
        return cls(
            verdict=cast(Verdict, verdict) if verdict in VERDICTS else None,
            seats=tuple(SeatResult.from_json(s) for s in data.get("seats") or ()),
            findings=tuple(str(f) for f in data.get("findings") or ()),
            recommendations=tuple(str(r) for r in data.get("recommendations") or ()),
            scores=scores,
            failed_subtasks=tuple(int(i) for i in data.get("failed_subtasks") or ()),
            errors=tuple(str(e) for e in data.get("errors") or ()),
        )


def normalise_finding(text: str) -> str:
    """The comparison key of a finding: case, whitespace and punctuation do not matter."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in folded)
    return _SPACES.sub(" ", kept).strip()


def deduplicate(items: Iterable[str]) -> tuple[str, ...]:
    """Drop repeats (compared by :func:`normalise_finding`) and blanks, keeping the first wording and order."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = normalise_finding(item)
        if key and key not in seen:
            seen.add(key)
            out.append(item.strip())
    return tuple(out)


def aggregate(seats: Sequence[SeatResult]) -> AggregateVerdict:
    """Combine the seats of one review round (see the module docstring for the rules)."""
    answered = [s for s in seats if not s.is_error]
    errors = tuple(s.seat for s in seats if s.is_error)
    verdict: Verdict | None
    if not answered:
        verdict = None
    elif any(s.verdict == "fail" for s in answered):
        verdict = "fail"
    elif all(s.verdict == "pass" for s in answered):
        verdict = "pass"
    else:
        verdict = "conditional"
    by_dimension: dict[str, list[int]] = {}
    for seat in answered:
        for name, value in seat.scores.items():
            by_dimension.setdefault(name, []).append(value)
    scores = {
        name: ScoreSummary(mean=sum(values) / len(values), spread=max(values) - min(values), n=len(values))
        for name, values in by_dimension.items()
    }
    return AggregateVerdict(
        verdict=verdict,
        seats=tuple(seats),
        findings=deduplicate(f for s in answered for f in s.findings),
        recommendations=deduplicate(r for s in answered for r in s.recommendations),
        scores=scores,
        failed_subtasks=tuple(sorted({i for s in answered for i in s.failed_subtasks})),
        errors=errors,
    )


@dataclass(frozen=True)
class ReviewStanding:
    """Where a pending review stands: its verdict, the seats that errored, and how many seats sat.

    A review is *complete* when every seat answered; only a complete ``pass`` is a plain accept.
    """

    verdict: Verdict | None
    errored: tuple[str, ...]
    seats: int

    @property
    def answered(self) -> int:
        """How many seats gave a verdict."""
        return max(self.seats - len(self.errored), 0)

    @property
    def complete(self) -> bool:
        """True when no seat errored."""
        return not self.errored

    @property
    def seats_text(self) -> str:
        """``1 of 2 seats`` — how the incomplete review is named to the user."""
        return f"{self.answered} of {self.seats} seat{'' if self.seats == 1 else 's'}"

    @classmethod
    def of(cls, detail: Mapping[str, Any]) -> ReviewStanding:
        """Read from a pending review's detail (its ``verdict`` and ``aggregate``)."""
        raw = detail.get("aggregate")
        agg = raw if isinstance(raw, Mapping) else {}
        verdict = detail.get("verdict", agg.get("verdict"))
        errored = tuple(str(e) for e in agg.get("errors") or ())
        seats = len(agg.get("seats") or ()) or len(errored)
        return cls(cast(Verdict, verdict) if verdict in VERDICTS else None, errored, seats)
