"""``tunaflow run``: the cycle without the terminal app, gate decisions only from flags.

Exit codes: 0 the plan reached Done; 3 a decision is pending (left for the app or a later run);
1 an error (message on stderr).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from tunaflow_tui.core.gitops import GitError
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.workflow.phases import Phase
from tunaflow_tui.runtime import planning, recovery
from tunaflow_tui.runtime.events import (
    MessageFinished,
    MessageStarted,
    NoticeRaised,
    PlanChanged,
    Progress,
    RuntimeEvent,
    ToolActivity,
)
from tunaflow_tui.runtime.runtime import WorkflowRuntime

EXIT_DONE = 0
EXIT_ERROR = 1
EXIT_PENDING = 3


@dataclass(frozen=True, slots=True)
class GatePolicy:
    """Which gate decisions the flags allow."""

    approve: bool = False
    accept: bool = False
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
    """Prints one line per notable runtime event."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._phase: dict[int, str] = {}

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
            return f"  {event.role} ({event.engine}) started"
        if isinstance(event, ToolActivity) and event.status != "started":
            return f"    {event.tool.name}: {event.tool.detail}"
        if isinstance(event, MessageFinished) and event.status != "done":
            return f"  ! reply {event.status}: {event.error_message or ''}".rstrip()
        if isinstance(event, NoticeRaised) and event.level == "warning":
            return f"  ! {event.text}"
        return None


def _target_plan(rt: WorkflowRuntime, plan_id: int | None) -> PlanRecord | None:
    if plan_id is not None:
        return rt.store.get_plan(plan_id)
    return planning.active_plan(rt)


async def drive(rt: WorkflowRuntime, policy: GatePolicy, *, request: str | None, resume: bool,
                out: TextIO = sys.stdout) -> int:
    """Run until Done (0), a gate the flags don't cover (3), or an error (1)."""
    plan_id: int | None = None
    if request:
        before = {p.id: p.updated_at for p in rt.store.list_plans()}
        result = await rt.send_user_message(request)
        if result is not None and not result.ok:
            reason = result.message.error_message or result.message.status
            say(f"tunaflow run: the Architect's turn failed: {reason}", sys.stderr)
            return EXIT_ERROR
        touched = [p for p in rt.store.list_plans() if before.get(p.id) != p.updated_at]
        if not touched:
            say("The Architect answered without proposing a plan; continue the conversation in the app.", out)
            return EXIT_PENDING
        plan_id = touched[-1].id
    elif resume:
        pending_reply = recovery.last_unanswered_user_message(rt)
        if pending_reply is not None and not rt.interrupted_plans():
            await recovery.answer_user_message(rt, pending_reply)
    setup_retried: set[int] = set()
    for _ in range(1000):
        plan = _target_plan(rt, plan_id)
        if plan is None:
            say("Nothing in progress.", out)
            return EXIT_DONE if resume else EXIT_PENDING
        plan_id = plan.id
        if plan.phase == Phase.DONE:
            return _done(rt, plan, policy, out)
        if plan.phase == Phase.ABANDONED:
            say(f"Plan {plan.id} was abandoned.", sys.stderr)
            return EXIT_ERROR
        decision = _decision_for(plan, policy)
        if decision == "retry_setup":
            # one retry per run: a setup that fails again needs a person, not a loop
            decision = None if plan.id in setup_retried else decision
            setup_retried.add(plan.id)
        if decision is None:
            interrupted = [r for r in rt.interrupted_plans() if r.plan_id == plan.id]
            if interrupted and plan.pending_decision is None:
                say(f"Resuming the interrupted {interrupted[0].role} step of plan {plan.id}.", out)
                await rt.resume_interrupted(plan.id, how="resume")
                continue
            if plan.phase == Phase.REVIEW and plan.pending_decision is None:
                await rt.start_review(plan.id)
                continue
            _explain_wait(plan, out)
            return EXIT_PENDING
        await rt.decide(plan.id, decision)
    return EXIT_PENDING


_HINTS = {
    "approval": "run again with --resume --approve, or decide in the app (`tunaflow`)",
    "doom_loop": "run again with --resume --on-fail redesign (or rework to let the Developer continue)",
    "dev_stalled": "no flag decides this: open the app (`tunaflow`) to continue, mark it complete or abandon it",
    "review_error": "no flag decides this: open the app (`tunaflow`) to retry the review seat",
    "setup_failed": "fix it in the worktree, then run again with --resume --on-setup-fail retry "
                    "(or skip to start the Developer without it), or open the app (`tunaflow`) to retry, "
                    "skip or open a shell there",
}


def _explain_wait(plan: PlanRecord, out: TextIO) -> None:
    detail = dict(plan.pending_detail or {})
    waiting = plan.pending_decision or plan.phase
    if plan.pending_decision == "review":
        verdict = detail.get("verdict")
        hint = ("run again with --resume --accept" if verdict == "pass"
                else f"the review says {verdict}: run again with --resume --on-fail rework|redesign "
                     "(--max-rounds raises the limit), or decide in the app")
    else:
        hint = _HINTS.get(str(plan.pending_decision), "decide in the app (`tunaflow`)")
    say(f"Waiting for you: plan {plan.id} “{plan.title}” — {waiting}; {hint}.", out)
    if plan.pending_decision == "setup_failed" and plan.worktree_path:
        say(f"  worktree: {plan.worktree_path}", out)
    reason = detail.get("reason")
    if plan.pending_decision in ("dev_stalled", "review_error", "setup_failed") and reason:
        say(f"tunaflow run: {reason}", sys.stderr)


def _decision_for(plan: PlanRecord, policy: GatePolicy) -> str | None:
    pending = plan.pending_decision
    detail = dict(plan.pending_detail or {})
    if pending == "approval":
        return "approve" if policy.approve else None
    if pending == "review":
        verdict = detail.get("verdict")
        if verdict == "pass":
            return "accept" if policy.accept else None
        if plan.review_round >= policy.max_rounds:
            return None
        return {"rework": "rework", "redesign": "redesign"}.get(policy.on_fail)
    if pending == "doom_loop":
        return {"rework": "continue", "redesign": "redesign"}.get(policy.on_fail)
    if pending == "setup_failed":
        return {"retry": "retry_setup", "skip": "skip_setup"}.get(policy.on_setup_fail)
    return None


def _done(rt: WorkflowRuntime, plan: PlanRecord, policy: GatePolicy, out: TextIO) -> int:
    say(f"Plan {plan.id} “{plan.title}” is done after {plan.review_round} review round(s).", out)
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
