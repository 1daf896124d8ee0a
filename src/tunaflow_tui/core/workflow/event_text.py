"""How the record reads: a plain sentence for every plan event, the same in every place it shows.

Accepting a complete pass, accepting over a failed review, accepting an incomplete review and
abandoning are different acts; the timeline, ``tunaflow status`` and ``tunaflow export`` all say
which one happened, with the same words, from here. Every other event (a review round, the
tests, a merge) reads as a sentence too, never as its id. Revision numbers read as the card
shows them (the first proposal is revision 1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from tunaflow_tui.core.counting import counted
from tunaflow_tui.core.workflow.phases import PlanEventType

ACCEPTED = PlanEventType.ACCEPTED
ACCEPTED_OVER_FAILED = PlanEventType.ACCEPTED_OVER_FAILED_REVIEW
ACCEPTED_PARTIAL = PlanEventType.ACCEPTED_PARTIAL_REVIEW
ABANDONED = PlanEventType.ABANDONED
PLAN_EDITED = PlanEventType.PLAN_EDITED
SETTLING_EVENTS = frozenset({ACCEPTED, ACCEPTED_OVER_FAILED, ACCEPTED_PARTIAL, ABANDONED})
"""The events that end a plan: what ``status`` and ``export`` give as its outcome."""


class _Event(Protocol):
    @property
    def type(self) -> str: ...

    @property
    def detail(self) -> Mapping[str, object]: ...


def _one_line(value: object, limit: int = 200) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _with_reason(text: str, detail: Mapping[str, object], key: str = "reason") -> str:
    reason = _one_line(detail.get(key), 600)
    return f"{text}: {reason}" if reason else text


def _seats(detail: Mapping[str, object]) -> str:
    answered, seats = detail.get("answered"), detail.get("seats")
    if isinstance(answered, int) and isinstance(seats, int):
        return f"{answered} of {counted(seats, 'seat')}"
    return "some seats errored"


def shown_revision(stored: object) -> int | None:
    """The revision number people see for a stored one (the store counts from 0, the card from 1)."""
    return stored + 1 if isinstance(stored, int) and not isinstance(stored, bool) else None


def _revision(detail: Mapping[str, object]) -> str:
    shown = shown_revision(detail.get("revision"))
    return "" if shown is None else f"revision {shown}"


def _round(detail: Mapping[str, object]) -> str:
    number = detail.get("round")
    return f"review round {number}" if isinstance(number, int) and number > 0 else "the review"


def _names(value: object) -> str:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return ", ".join(_one_line(item, 60) for item in value)
    return _one_line(value, 200)


def _count(value: object) -> int:
    return len(value) if isinstance(value, Sequence) and not isinstance(value, str) else 0


_ROLE_NAMES = {"architect": "the Architect", "developer": "the Developer", "reviewer": "the reviewer",
               "verifier": "the verifier", "review": "the reviewers"}
USER_CANCELLED = "cancelled by you"
"""What a step the user stopped (f4, "Cancel agent") says in the record, the chat and the timeline."""


def _who(detail: Mapping[str, object]) -> str:
    role = str(detail.get("role") or "")
    if role == "review":
        return f"the reviewers ({_round(detail)})" if isinstance(detail.get("round"), int) else "the reviewers"
    return _ROLE_NAMES.get(role, f"the {_one_line(role, 40)}" if role else "the agent")


def _agent_finished(detail: Mapping[str, object]) -> str:
    who = _who(detail)
    status = str(detail.get("status") or "done")
    if status == "done":
        return f"{who} finished"
    if status == "cancelled":
        return f"{who}: {USER_CANCELLED}"
    if status == "interrupted":
        how = detail.get("how")
        return f"{who} had been interrupted" + (f"; {how} asked" if how else "")
    if status == "setup_failed":
        return f"{who} did not start: the worktree setup failed"
    return _with_reason(f"{who} stopped with an error", detail, "error")


def _agent_started(detail: Mapping[str, object]) -> str:
    if detail.get("role") == "review":
        # the round's start is its own event (review_started): this one says who reads, so the
        # timeline never lists "review round 1 started" twice
        seats = _names(detail.get("seats"))
        if not seats:
            return f"{_round(detail)}: every reviewer had answered"
        return f"{seats} reading the work ({_round(detail)})"
    return f"{_who(detail)} started"


def _tests_ran(detail: Mapping[str, object]) -> str:
    status = str(detail.get("status") or "")
    if status == "not_detected":
        return "no test command found: the reviewers are told so"
    summary = _one_line(detail.get("summary"), 200)
    if status == "error":
        return "the tests could not run" + (f": {summary}" if summary else "")
    return (f"tests {status}" if status else "the tests ran") + (f": {summary}" if summary else "")


def _seat_finished(detail: Mapping[str, object]) -> str:
    seat = detail.get("seat")
    if not isinstance(seat, Mapping):
        return "a review seat answered"
    name = _one_line(seat.get("seat") or "seat", 40)
    engine = _one_line(seat.get("engine"), 40)
    who = f"{name} ({engine})" if engine else name
    verdict = seat.get("verdict")
    if verdict and not seat.get("error"):
        return f"{who} answered: {_one_line(verdict, 20)}"
    return _with_reason(f"{who} gave no verdict", seat, "error")


def _setup_finished(detail: Mapping[str, object]) -> str:
    if detail.get("ok"):
        duration = detail.get("duration_s")
        return "the worktree setup finished" + (f" in {duration:.1f}s" if isinstance(duration, int | float) else "")
    return _with_reason("the worktree setup failed", detail)


def _review_finished(detail: Mapping[str, object]) -> str:
    verdict = detail.get("verdict")
    return f"{_round(detail)}: " + (_one_line(verdict, 20) if verdict else "no verdict (review error)")


def _marker_rejected(detail: Mapping[str, object]) -> str:
    kind = _one_line(detail.get("kind"), 40)
    role = _one_line(detail.get("role"), 40)
    text = (f"a {kind} marker" if kind else "a marker") + (f" from the {role}" if role else "") + " was refused"
    return _with_reason(text, detail)


def _revision_requested(detail: Mapping[str, object]) -> str:
    revision = _revision(detail)
    return _with_reason(f"asked for {revision}" if revision else "asked for a revision", detail, "feedback")


def _redesign_requested(detail: Mapping[str, object]) -> str:
    revision = _revision(detail)
    return _with_reason("redesign requested" + (f" ({revision})" if revision else ""), detail, "feedback")


def _rework_requested(detail: Mapping[str, object]) -> str:
    round_no = detail.get("round")
    text = f"rework requested after review round {round_no}" if isinstance(round_no, int) else "rework requested"
    return _with_reason(text, detail, "feedback")


def _proposal_received(detail: Mapping[str, object]) -> str:
    parts = [part for part in (_revision(detail), _subtasks(detail.get("subtask_count"))) if part]
    return "proposal received" + (f" ({', '.join(parts)})" if parts else "")


def _subtasks(count: object) -> str:
    return counted(count, "subtask") if isinstance(count, int) else ""


def _doom_loop(detail: Mapping[str, object]) -> str:
    failures = detail.get("failures")
    answer = _one_line(detail.get("answer"), 40)
    text = f"after {counted(failures, 'failed review')} in a row" if isinstance(failures, int) else "repeated failures"
    return f"{text}: {answer}" if answer else text


def _review_failed(detail: Mapping[str, object]) -> str:
    failures = detail.get("failures_since_reset")
    text = f"{_round(detail)} failed"
    return f"{text} ({counted(failures, 'failed review')} in a row)" if isinstance(failures, int) else text


def _merged(detail: Mapping[str, object]) -> str:
    kind = str(detail.get("kind") or "")
    return {"fast-forward": "merged (fast-forward)", "merge-commit": "merged (merge commit)",
            "up-to-date": "nothing to merge: the base already has it"}.get(kind, "merged into the base branch")


def _with_paths(text: str, detail: Mapping[str, object]) -> str:
    paths = detail.get("paths")
    return f"{text}: {_names(paths)}" if _count(paths) else text


_SENTENCES: dict[str, Callable[[Mapping[str, object]], str]] = {
    PlanEventType.PROPOSAL_RECEIVED: _proposal_received,
    PlanEventType.APPROVED: lambda d: "approved" + (f" {_revision(d)}" if _revision(d) else ""),
    PlanEventType.DEV_STARTED: lambda d: "development started" + (f" on {_revision(d)}" if _revision(d) else ""),
    PlanEventType.REVISION_REQUESTED: _revision_requested,
    PlanEventType.HELD: lambda d: "put on hold" + (f" (in {_one_line(d.get('from'), 20)})" if d.get("from") else ""),
    PlanEventType.RESUMED: lambda d: "taken off hold" + (f" (back to {_one_line(d.get('to'), 20)})"
                                                         if d.get("to") else ""),
    PlanEventType.SUBTASK_DONE: lambda d: f"subtask {d['index']} done" if d.get("index") else "a subtask done",
    PlanEventType.IMPL_COMPLETE: lambda _d: "the Developer reported the work complete",
    PlanEventType.DEV_STALLED: lambda d: _with_reason("the Developer stopped", d),
    PlanEventType.DEV_CONTINUED: lambda _d: "the Developer is asked to continue",
    PlanEventType.REVIEW_STARTED: lambda d: f"{_round(d)} started",
    PlanEventType.REVIEW_FINISHED: _review_finished,
    PlanEventType.REVIEW_ERROR: lambda d: f"{_round(d)}: no verdict from {_names(d.get('seats')) or 'a seat'}",
    PlanEventType.REVIEW_FAILED: _review_failed,
    PlanEventType.REVIEW_RETRY_REQUESTED: lambda d: f"{_round(d)}: {_names(d.get('seats')) or 'the seats'} "
                                                    "asked again",
    PlanEventType.REWORK_REQUESTED: _rework_requested,
    PlanEventType.REDESIGN_REQUESTED: _redesign_requested,
    PlanEventType.DOOM_LOOP_ESCALATED: _doom_loop,
    PlanEventType.MARKER_REJECTED: _marker_rejected,
    PlanEventType.SETUP_FAILED: lambda d: _with_reason("the worktree setup failed", d),
    PlanEventType.SETUP_RETRY_REQUESTED: lambda _d: "the worktree setup runs again",
    PlanEventType.SETUP_SKIPPED: lambda _d: "the worktree setup was skipped",
    PlanEventType.AGENT_STARTED: _agent_started,
    PlanEventType.AGENT_FINISHED: _agent_finished,
    PlanEventType.TESTS_RAN: _tests_ran,
    PlanEventType.TEST_BYPRODUCTS_REMOVED: lambda d: f"removed {counted(_count(d.get('paths')), 'file')} "
                                                     "the tests left behind",
    PlanEventType.SEAT_FINISHED: _seat_finished,
    PlanEventType.REVIEWER_MODIFIED_CODE: lambda d: _with_paths(
        f"a reviewer changed {counted(_count(d.get('paths')), 'file')}"
        + (" (reverted)" if d.get("reverted") else ""), d),
    PlanEventType.COMMIT_FAILED: lambda d: _with_reason("could not commit", d, "error"),
    PlanEventType.MERGED: _merged,
    PlanEventType.MERGE_CONFLICT: lambda d: f"not merged: conflicts in {counted(len(event_files(d)), 'file')}",
    PlanEventType.MERGE_QUEUED: lambda _d: "queued to merge",
    PlanEventType.MERGE_UNQUEUED: lambda d: _with_reason("left the merge queue", d, "outcome"),
    PlanEventType.CONFLICT_RESOLUTION_REQUESTED: lambda d: _with_paths(
        "the Developer is asked to merge the base and resolve the conflicts", {"paths": d.get("files")}),
    PlanEventType.CONFLICT_UNRESOLVED: lambda d: _with_paths(
        "the Developer did not resolve the conflicts", {"paths": d.get("files")}),
    PlanEventType.CONFLICT_LEFT: lambda _d: "left unmerged after a merge conflict",
    PlanEventType.WORKTREE_REMOVED: lambda _d: "worktree removed (the branch stays)",
    PlanEventType.WORKTREE_CREATED: lambda _d: "the worktree was created",
    PlanEventType.WORKTREE_READY: lambda _d: "the worktree is ready",
    PlanEventType.WORKTREE_INCLUDED: lambda d: f"copied {counted(_count(d.get('copied')), 'file')} named in "
                                               ".worktreeinclude",
    PlanEventType.SETUP_STARTED: lambda d: _with_reason("worktree setup started", d, "command"),
    PlanEventType.SETUP_FINISHED: _setup_finished,
    PlanEventType.PRIVATE_FILES_COMMITTED: lambda d: _with_paths("private files reached a commit", d),
    PlanEventType.PROPOSAL_REFUSED: lambda d: f"a proposal with {_subtasks(d.get('subtasks')) or 'too many subtasks'}"
                                              " was refused" + (f" (at most {d.get('limit')})" if d.get("limit") else ""),
    PlanEventType.GIT_BASELINE: lambda d: _with_reason("git hooks recorded", d, "summary"),
    PlanEventType.GIT_INTEGRITY: lambda d: _with_reason("git checked after the agent", d, "summary"),
    PlanEventType.HOOKS_SKIPPED: lambda d: f"hooks not run: {_names(d.get('hooks')) or 'changed hooks'}",
    PlanEventType.LEFTOVER_STOPPED: lambda d: _with_reason("stopped what an earlier tunaflow left running", d, "what"),
    PlanEventType.RUN_INTERRUPTED: lambda d: _with_reason(f"{_who(d)} was interrupted", d),
    PlanEventType.PLAN_QUEUED: lambda d: "queued: "
                                         + (f"{counted(_count_of(d.get('working')), 'plan')} working, "
                                            f"at most {d.get('limit')} at once" if d.get("limit") else
                                            "waiting for a free slot"),
    PlanEventType.QUEUE_LEFT: lambda d: ("left the queue" if d.get("why") == "withdrawn"
                                         else "out of the queue: its work starts"),
}


def _count_of(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def event_text(kind: str, detail: Mapping[str, object]) -> str:
    """The plain sentence for an event of type ``kind`` (every :class:`PlanEventType` has one).

    An unknown type (a newer tunaflow's record) reads as its name with spaces.
    """
    if kind == ACCEPTED:
        return "accepted a complete, passing review"
    if kind == ACCEPTED_OVER_FAILED:
        verdict = detail.get("verdict")
        text = "accepted over a failed review" + (f" (verdict {verdict})" if verdict and verdict != "fail" else "")
        return _with_reason(text, detail)
    if kind == ACCEPTED_PARTIAL:
        return _with_reason(f"accepted with an incomplete review ({_seats(detail)})", detail)
    if kind == ABANDONED:
        return _with_reason("abandoned", detail)
    if kind == PLAN_EDITED:
        changes = detail.get("changes")
        listed = [str(c) for c in changes] if isinstance(changes, Sequence) and not isinstance(changes, str) else []
        return "edited by you: " + ("; ".join(listed) if listed else "the proposal changed")
    sentence = _SENTENCES.get(kind)
    if sentence is None:
        return kind.replace("_", " ")
    try:
        return sentence(detail)
    except (TypeError, ValueError):  # a record written by another version with other details
        return kind.replace("_", " ")


@dataclass(frozen=True)
class PlanOutcome:
    """How a plan ended: the settling event's type and its sentence."""

    kind: str
    text: str
    reason: str


def plan_outcome(events: Iterable[_Event]) -> PlanOutcome | None:
    """The latest settling event of a plan (events oldest first), or None while it has not ended."""
    found: PlanOutcome | None = None
    for event in events:
        if event.type in SETTLING_EVENTS:
            text = event_text(event.type, event.detail)
            found = PlanOutcome(event.type, text, str(event.detail.get("reason") or ""))
    return found


_CONFLICT_EVENTS = frozenset({PlanEventType.MERGE_CONFLICT, PlanEventType.CONFLICT_UNRESOLVED})


def event_files(detail: Mapping[str, object]) -> tuple[str, ...]:
    """The files a conflict event names: ``files``, or ``conflicted_files`` in events written before."""
    raw = detail.get("files")
    if raw is None:
        raw = detail.get("conflicted_files")
    return tuple(str(path) for path in raw) if isinstance(raw, list | tuple) else ()


def conflict_files(events: Iterable[_Event]) -> tuple[str, ...]:
    """The files in conflict, as the plan's latest conflict event recorded them (events oldest first).

    Its own merge conflict, or the conflicts its Developer left; an event from before a merge conflict
    had its own type (a ``merged`` event of kind ``conflict``) is read too.
    """
    found: tuple[str, ...] = ()
    for event in events:
        if event.type in _CONFLICT_EVENTS or (event.type == PlanEventType.MERGED
                                              and event.detail.get("kind") == "conflict"):
            found = event_files(event.detail)
    return found
