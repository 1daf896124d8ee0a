"""``tunaflow run``: the cycle without the terminal app, gate decisions only from flags.

Exit codes: 0 the plan reached Done; 3 a decision is pending (left for the app or a later run);
1 an error (message on stderr). With several requests (or ``--resume`` with several plans in flight)
each plan goes through its gates beside the others, and the code is 3 while any of them waits for a
decision, else 1 if any failed, else 0.

The flags are the only source of gate decisions, and they never stretch: ``--accept`` accepts a
complete, passing review and nothing else; a review with an errored seat is incomplete and stops
the run (``--retry-seats`` runs the seat again, ``--accept-partial`` accepts it as it is); a failed
or conditional review is never accepted from here.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

from tunaflow_tui.core.counting import counted
from tunaflow_tui.core.gitops import GitError
from tunaflow_tui.core.storage.leases import TurnInProgress
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.phases import PendingDecision, Phase, PlanEventType, Waiting
from tunaflow_tui.core.workflow.verdicts import ReviewStanding
from tunaflow_tui.core.workflow.ways import WayOn
from tunaflow_tui.runtime import recovery
from tunaflow_tui.runtime.events import (
    MessageFinished,
    MessageStarted,
    NoticeRaised,
    PermissionAsked,
    PlanChanged,
    Progress,
    RuntimeEvent,
    ToolActivity,
)
from tunaflow_tui.runtime.leftovers import AgentStillRunning, describe
from tunaflow_tui.runtime.plans_in_flight import plans_in_flight
from tunaflow_tui.runtime.runtime import RuntimeError_, WorkflowRuntime

EXIT_DONE = 0
EXIT_ERROR = 1
EXIT_PENDING = 3


@dataclass(frozen=True, slots=True)
class GatePolicy:
    """Which gate decisions the flags allow."""

    approve: bool = False
    accept: bool = False
    accept_partial: bool = False  # also accept a passing review that a seat could not give a verdict on
    retry_seats: bool = False  # run errored reviewer seats again (once per round)
    on_fail: str = "stop"  # rework | redesign | stop
    max_rounds: int = 5
    merge: bool = False
    on_setup_fail: str = "stop"  # retry | skip | stop


def say(text: str, stream: TextIO) -> None:
    """Write one line to the terminal running ``tunaflow run``, with agent text in it made inert.

    Plan titles, reasons and errors come from agents and engines: control sequences in them must
    not reach the user's terminal.
    """
    print(neutralize(text), file=stream, flush=True)


class ProgressPrinter:
    """Prints one line per notable runtime event.

    ``plan_of`` names the plan a conversation's agent works for (a plan's implementation or review
    branch), so lines of plans worked on side by side say which plan they are about.
    """

    def __init__(self, out: TextIO, plan_of: Callable[[str], int | None] | None = None) -> None:
        self._out = out
        self._phase: dict[int, str] = {}
        self.plan_of = plan_of

    def __call__(self, event: RuntimeEvent) -> None:
        line = self._line(event)
        if line:
            say(line, self._out)

    def _line(self, event: RuntimeEvent) -> str | None:
        if isinstance(event, Progress):
            return f"· {event.text}"
        if isinstance(event, PlanChanged):
            key = f"{event.phase}/{event.pending_decision}"
            if self._phase.get(event.plan_id) == key:
                return None
            self._phase[event.plan_id] = key
            waiting = f", waiting for: {event.pending_decision}" if event.pending_decision else ""
            return f"▸ plan {event.plan_id}: {event.phase}{waiting}"
        if isinstance(event, MessageStarted):
            plan_id = self.plan_of(event.conversation_id) if self.plan_of is not None else None
            return f"  {event.role} ({event.engine}) started" + (f" for plan {plan_id}" if plan_id else "")
        if isinstance(event, ToolActivity) and event.status != "started":
            return f"    {event.tool.name}: {event.tool.detail}"
        if isinstance(event, MessageFinished) and event.status != "done":
            return f"  ! reply {event.status}: {event.error_message or ''}".rstrip()
        if isinstance(event, NoticeRaised) and event.level == "warning":
            return f"  ! {event.text}"
        if isinstance(event, PermissionAsked):  # nobody can answer here: the idle timeout will cancel it
            return (f"  ! {event.request.engine} asks before: {event.request.title} — answer it in the app, "
                    "or allow such commands with allow_commands; unanswered, it is cancelled at the idle timeout")
        return None


async def _clear_leftovers(rt: WorkflowRuntime, stop: bool, out: TextIO) -> bool:
    """True when no agent an earlier tunaflow left running is in the way (stopping them if ``stop``)."""
    stopped = await rt.stop_leftover_agents(agents=stop)
    for leftover in stopped:
        say(f"Stopped {leftover.what} that an earlier tunaflow left running "
            f"(process group {leftover.record.identity.pgid}).", out)
    found = rt.leftover_agents()
    if found:
        say(f"tunaflow run: {describe(found)}", sys.stderr)
        return False
    return True


def plan_of_conversation(rt: WorkflowRuntime, conversation_id: str) -> int | None:
    """The plan whose implementation or review branch ``conversation_id`` is, if any."""
    if not conversation_id.startswith("branch:"):
        return None
    branch = int(conversation_id.split(":", 1)[1])
    return next((plan.id for plan in rt.store.list_plans() if branch in (plan.impl_branch_id, plan.review_branch_id)),
                None)


def overall(codes: Sequence[int]) -> int:
    """One exit code for several plans: 3 while any decision waits, else 1 if any failed, else 0."""
    if EXIT_PENDING in codes:
        return EXIT_PENDING
    return EXIT_ERROR if any(code != EXIT_DONE for code in codes) else EXIT_DONE


async def _propose(rt: WorkflowRuntime, request: str, out: TextIO, driven: set[int]) -> tuple[int | None, int]:
    """Send one request to the Architect: the plan its answer proposed (or revised), or the exit code."""
    since = rt.store.newest_plan_event_id()
    result = await rt.send_user_message(request)
    if result is not None and not result.ok:
        reason = result.message.error_message or result.message.status
        say(f"tunaflow run: the Architect's turn failed: {reason}", sys.stderr)
        return None, EXIT_ERROR
    proposed = [e.plan_id for e in rt.store.plan_events_after(since, (PlanEventType.PROPOSAL_RECEIVED,))
                if e.plan_id not in driven]
    if not proposed:
        say("The Architect answered without proposing a plan; continue the conversation in the app.", out)
        return None, EXIT_PENDING
    return proposed[-1], EXIT_DONE


async def drive(rt: WorkflowRuntime, policy: GatePolicy, *, request: str | None = None, resume: bool = False,
                out: TextIO | None = None, stop_leftovers: bool = False, requests: Sequence[str] = ()) -> int:
    """Run until every plan is Done (0), a gate the flags don't cover (3), or an error (1).

    Each request (``request``, then ``requests``, in order) goes to the Architect; each plan proposed
    goes through its gates at once, beside the others, while the next request is sent (how many
    Developers work at the same time is the runtime's to say). ``resume`` drives every plan in flight.
    Several plans give one exit code (:func:`overall`: 3 while any decision waits).

    Nothing starts while an agent an earlier tunaflow left running is still at work (3, with what to
    do), unless ``stop_leftovers``: then those agents are stopped first. ``out``: where to write (the
    standard output as it is when called, not as it was when this module was loaded).
    """
    out = out or sys.stdout
    if not await _clear_leftovers(rt, stop_leftovers, out):
        return EXIT_PENDING
    asked = [text for text in ([request] if request else []) + list(requests) if text.strip()]
    codes: list[int] = []
    drivers: dict[int, asyncio.Task[int]] = {}
    try:
        if not asked and resume:
            pending_reply = recovery.last_unanswered_user_message(rt)
            if pending_reply is not None and not rt.interrupted_plans():
                await recovery.answer_user_message(rt, pending_reply)
        if asked:
            for number, text in enumerate(asked):
                try:
                    plan_id, code = await _propose(rt, text, out, set(drivers))
                except (TurnInProgress, AgentStillRunning, RuntimeError_) as exc:
                    still = "Still running: " if isinstance(exc, TurnInProgress) else ""
                    say(f"tunaflow run: {still}{exc}. Not sent, nothing stored: "
                        f"{counted(len(asked) - number, 'request')}.", sys.stderr)
                    codes.append(EXIT_ERROR)
                    break
                if plan_id is None:
                    codes.append(code)
                elif plan_id not in drivers:
                    drivers[plan_id] = asyncio.create_task(_drive_plan(rt, plan_id, policy, out))
        else:
            in_flight = plans_in_flight(rt.store)
            if not in_flight:
                say("Nothing in progress.", out)
                return EXIT_DONE if resume else EXIT_PENDING
            queued = rt.queued_to_start()  # left queued by an earlier run: they start here first, in their order
            in_order = sorted(in_flight, key=lambda p: (0, queued.index(p.id)) if p.id in queued else (1, p.id))
            drivers = {plan.id: asyncio.create_task(_drive_plan(rt, plan.id, policy, out,
                                                                queued=plan.id in queued))
                       for plan in in_order}
    except BaseException:  # a signal or a failure: the plans started so far stop with it
        for task in drivers.values():
            task.cancel()
        await asyncio.gather(*drivers.values(), return_exceptions=True)
        raise
    # (a signal now cancels this gather, and the gather every plan's task)
    finished = await asyncio.gather(*drivers.values(), return_exceptions=True)
    failed = [error for error in finished if isinstance(error, BaseException)]
    if failed:  # every plan reached its gate or stopped; the first failure is the one reported
        raise failed[0]
    return overall(codes + [code for code in finished if isinstance(code, int)])


async def _drive_plan(rt: WorkflowRuntime, plan_id: int, policy: GatePolicy, out: TextIO, *,
                      queued: bool = False) -> int:
    """Take one plan through the gates the flags decide, until it is done or waits for a person.

    ``queued``: an earlier run approved the plan and left it waiting for a place; it waits here in its
    place, then its step starts, before the gates.
    """
    retried: set[tuple[int, int]] = set()
    if queued:
        say(f"Plan {plan_id} was queued (max_parallel_plans = {rt.settings.workflow.max_parallel_plans}): "
            "it starts in its place.", out)
        await rt.start_queued(plan_id)
    for _ in range(1000):
        plan = rt.get_plan(plan_id)
        if plan.phase == Phase.DONE:
            return _done(rt, plan, policy, out)
        if plan.phase == Phase.ABANDONED:
            say(f"Plan {plan.id} was abandoned.", sys.stderr)
            return EXIT_ERROR
        way = rt.way_on(plan.id)
        decision = _decision_for(plan, way, policy, retried)
        if decision is None:
            _explain_wait(plan, way, out)
            return EXIT_PENDING
        if decision is Decision.RETRY:
            retried.add((plan.id, plan.review_round))
        if decision is Decision.RETRY_SETUP:
            # one retry per run: a setup that fails again needs a person, not a loop
            retried.add((plan.id, -1))
        if decision in (Decision.RESUME_STEP, Decision.RETRY_STEP):
            run = next((r for r in rt.interrupted_plans() if r.plan_id == plan.id), None)
            role = run.role if run and run.role else "agent"
            say(f"{'Resuming' if decision is Decision.RESUME_STEP else 'Restarting'} the interrupted {role} "
                f"step of plan {plan.id}.", out)
        await rt.decide(plan.id, decision)
    return EXIT_PENDING


def _review_hint(plan: PlanRecord) -> str:
    standing = ReviewStanding.of(plan.pending_detail or {})
    if standing.verdict == "pass" and not standing.complete:
        return (f"review incomplete: retry the seat ({standing.seats_text} answered; "
                f"{', '.join(standing.errored)} gave no verdict): run again with --resume --retry-seats, "
                f"or with --accept-partial to accept {standing.seats_text}, or decide in the app")
    if standing.verdict == "pass":
        return "run again with --resume --accept"
    return (f"the review says {standing.verdict}: run again with --resume --on-fail rework|redesign "
            "(--max-rounds raises the limit), or decide in the app")


_HINTS = {
    Waiting.APPROVAL: "run again with --resume --approve, or decide in the app (`tunaflow`)",
    Waiting.DOOM_LOOP: "run again with --resume --on-fail redesign (or rework to let the Developer continue)",
    Waiting.DEV_STALLED: "no flag decides this: open the app (`tunaflow`) to continue, mark it complete or "
                         "abandon it",
    Waiting.REVIEW_ERROR: "run again with --resume --retry-seats, or open the app (`tunaflow`) to retry the "
                          "review seats",
    Waiting.SETUP_FAILED: "fix it in the worktree, then run again with --resume --on-setup-fail retry "
                          "(or skip to start the Developer without it), or open the app (`tunaflow`) to retry, "
                          "skip or open a shell there",
    Waiting.HELD: "no flag takes it off hold: resume it in the app (`tunaflow`)",
    Waiting.WORKING: "another tunaflow process is working on it; wait for it, or close it and run with --resume",
}


def _explain_wait(plan: PlanRecord, way: WayOn, out: TextIO) -> None:
    detail = dict(plan.pending_detail or {})
    if way.waiting is Waiting.REVIEW:
        hint = _review_hint(plan)
    else:
        hint = f"{way.summary}; " + _HINTS.get(way.waiting, "decide in the app (`tunaflow`)")
    # a held plan's summary says so itself ("on hold — …"); only the review's own hint does not
    held = " (on hold)" if way.held and not hint.startswith("on hold") else ""
    if way.waiting is Waiting.WORKING:
        say(f"Plan {plan.id} “{plan.title}”: {hint}.", out)
        return
    if way.waiting is Waiting.HELD:  # held while it waited for a slot: no question to name
        say(f"Waiting for you: plan {plan.id} “{plan.title}” — {hint}.", out)
        return
    say(f"Waiting for you: plan {plan.id} “{plan.title}” — {plan.pending_decision or plan.phase}{held}; {hint}.",
        out)
    if plan.pending_decision == PendingDecision.SETUP_FAILED and plan.worktree_path:
        say(f"  worktree: {plan.worktree_path}", out)
    reason = detail.get("reason")
    if plan.pending_decision in (PendingDecision.DEV_STALLED, PendingDecision.REVIEW_ERROR,
                                 PendingDecision.SETUP_FAILED) and reason:
        say(f"tunaflow run: {reason}", sys.stderr)
    raw = detail.get("aggregate")
    seats = raw.get("seats") if isinstance(raw, dict) else None
    for seat in seats if isinstance(seats, list) else ():
        if isinstance(seat, dict) and seat.get("error"):
            say(f"tunaflow run: {seat.get('seat')} ({seat.get('engine')}): {seat['error']}", sys.stderr)


def _review_decision(plan: PlanRecord, policy: GatePolicy, retry_first: bool) -> Decision | None:
    standing = ReviewStanding.of(plan.pending_detail or {})
    if retry_first:
        return Decision.RETRY
    if standing.verdict == "pass":
        if not standing.complete:
            return Decision.ACCEPT_PARTIAL if policy.accept_partial else None
        return Decision.ACCEPT if policy.accept or policy.accept_partial else None
    if plan.review_round >= policy.max_rounds:
        return None
    return {"rework": Decision.REWORK, "redesign": Decision.REDESIGN}.get(policy.on_fail)


def _decision_for(plan: PlanRecord, way: WayOn, policy: GatePolicy,
                  retried: set[tuple[int, int]]) -> Decision | None:
    """The decision the flags take for what the plan waits on, if they take one (only from ``way``)."""
    retry_first = policy.retry_seats and Decision.RETRY in way.decisions \
        and (plan.id, plan.review_round) not in retried
    choice: Decision | None = None
    if way.waiting is Waiting.APPROVAL:
        choice = Decision.APPROVE if policy.approve else None
    elif way.waiting is Waiting.REVIEW:
        choice = _review_decision(plan, policy, retry_first)
    elif way.waiting is Waiting.REVIEW_ERROR:
        choice = Decision.RETRY if retry_first else None
    elif way.waiting is Waiting.DOOM_LOOP:
        choice = {"rework": Decision.CONTINUE, "redesign": Decision.REDESIGN}.get(policy.on_fail)
    elif way.waiting is Waiting.SETUP_FAILED and (plan.id, -1) not in retried:
        choice = {"retry": Decision.RETRY_SETUP, "skip": Decision.SKIP_SETUP}.get(policy.on_setup_fail)
    elif way.waiting is Waiting.SETUP_FAILED:
        choice = Decision.SKIP_SETUP if policy.on_setup_fail == "skip" else None
    elif way.waiting is Waiting.START_REVIEW:
        choice = Decision.START_REVIEW
    elif way.waiting is Waiting.INTERRUPTED:
        choice = Decision.RESUME_STEP if Decision.RESUME_STEP in way.decisions else Decision.RETRY_STEP
    return choice if choice in way.decisions else None


def _done(rt: WorkflowRuntime, plan: PlanRecord, policy: GatePolicy, out: TextIO) -> int:
    say(f"Plan {plan.id} “{plan.title}” is done after {counted(plan.review_round, 'review round')}.", out)
    if policy.merge and plan.git_branch:
        try:
            result = rt.merge(plan.id)
        except (ValueError, GitError) as exc:
            say(f"Merge refused: {exc}", out)
            return EXIT_PENDING
        say(f"Merge: {result.kind} — {result.message}", out)
        if str(result.kind) == "conflict":
            return EXIT_PENDING
    elif plan.git_branch:
        say(f"Its work is on branch {plan.git_branch}; merge it with `--merge` or from the app.", out)
    return EXIT_DONE
