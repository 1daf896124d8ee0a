"""A new worktree made ready before the Developer starts: ``.worktreeinclude`` files, then ``worktree_setup``.

Runs once per worktree (from its ``worktree_created`` event to its ``worktree_ready`` event). What
happened is shown in the implementation branch as a tunaflow message; a failed setup becomes the
pending ``setup_failed`` decision (retry / skip; the app can also open a shell in the worktree).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.core.counting import counted
from tunaflow_tui.core.gitops.worktree_include import INCLUDE_FILE, IncludeResult, copy_included
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow import SetupFailed
from tunaflow_tui.core.workflow.phases import Actor, PlanEventType
from tunaflow_tui.core.worktree_setup import SetupResult, run_setup
from tunaflow_tui.runtime.events import MessageAdded, NoticeRaised

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import StepContext

CREATED_EVENT = PlanEventType.WORKTREE_CREATED
READY_EVENT = PlanEventType.WORKTREE_READY
MESSAGE_OUTPUT_CHARS = 6_000
_FENCE_RUN = re.compile(r"`{3,}")


def needs_preparation(rt: StepContext, plan: PlanRecord) -> bool:
    """True while the plan's worktree was created and has not been made ready yet."""
    if not plan.worktree_path:
        return False
    waiting = False
    for event in rt.store.list_plan_events(plan.id):
        if event.detail.get("path") != plan.worktree_path:
            continue
        if event.type == CREATED_EVENT:
            waiting = True
        elif event.type == READY_EVENT:
            waiting = False
    return waiting


def mark_ready(rt: StepContext, plan: PlanRecord, *, setup: str) -> None:
    """Record that the worktree is ready (``setup``: ok, none or skipped); it is not prepared again."""
    rt.service.record(plan.id, READY_EVENT, Actor.SYSTEM, {"path": plan.worktree_path, "setup": setup})


def _fenced(text: str) -> str:
    longest = max((len(m) for m in _FENCE_RUN.findall(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def _message(included: IncludeResult, setup: SetupResult | None) -> str:
    lines: list[str] = []
    if included.copied:
        shown = ", ".join(f"`{p}`" for p in included.copied[:20])
        more = f" and {len(included.copied) - 20} more" if len(included.copied) > 20 else ""
        lines.append(f"Copied from the main tree ({INCLUDE_FILE}, never committed): {shown}{more}.")
    for path, reason in included.skipped[:10]:
        lines.append(f"Not copied: `{path}` — {reason}.")
    if setup is not None:
        if lines:
            lines.append("")
        outcome = f"finished in {setup.duration_s:.1f}s" if setup.ok else f"**failed** — {setup.reason}"
        lines.append(f"Worktree setup `{setup.command}` {outcome}.")
        output = setup.output[-MESSAGE_OUTPUT_CHARS:]
        if output.strip():
            lines += ["", _fenced(output)]
        if not setup.ok:
            lines += ["", "The Developer has not started: retry the setup, skip it, or open a shell in the "
                          "worktree to fix it."]
    return "\n".join(lines)


def _tell_branch(rt: StepContext, plan: PlanRecord, text: str) -> None:
    if not text or plan.impl_branch_id is None:
        return
    conversation = f"branch:{plan.impl_branch_id}"
    message = rt.store.add_message(conversation, "system", text, status="done")
    rt.emit(MessageAdded(conversation, message.id, "system"))


async def _run_setup(rt: StepContext, plan: PlanRecord, root: Path) -> SetupResult:
    workflow = rt.settings.workflow
    configured = workflow.worktree_setup or ""
    shown = configured if isinstance(configured, str) else " ".join(configured)
    rt.progress(f"Plan {plan.id}: setting up the worktree: {shown}", plan.id)
    rt.service.record(plan.id, PlanEventType.SETUP_STARTED, Actor.SYSTEM, {"command": shown, "path": str(root)})
    result = await asyncio.to_thread(run_setup, configured, root, project=rt.project_dir,
                                     branch=plan.git_branch or "", timeout_s=workflow.worktree_setup_timeout_s)
    rt.service.record(plan.id, PlanEventType.SETUP_FINISHED, Actor.SYSTEM, {
        "command": result.command, "ok": result.ok, "exit_code": result.exit_code,
        "duration_s": round(result.duration_s, 3), "reason": result.reason, "output_tail": result.output[-8000:],
    })
    if result.ok:
        rt.progress(f"Plan {plan.id}: worktree setup finished in {result.duration_s:.1f}s.", plan.id)
    else:
        rt.emit(NoticeRaised(f"The worktree setup failed ({result.reason}); the Developer has not started.",
                             "error"))
    return result


async def ensure_ready(rt: StepContext, plan: PlanRecord) -> PlanRecord | None:
    """Prepare a newly created worktree; None when it is ready, else the plan waiting on ``setup_failed``."""
    if not needs_preparation(rt, plan):
        return None
    root = Path(plan.worktree_path or "")
    included = await asyncio.to_thread(copy_included, rt.project_dir, root)
    if included.copied or included.skipped:
        rt.service.record(plan.id, PlanEventType.WORKTREE_INCLUDED, Actor.SYSTEM, {
            "copied": list(included.copied[:200]), "skipped": [list(s) for s in included.skipped[:50]],
        })
        if included.copied:
            rt.progress(f"Plan {plan.id}: copied {counted(len(included.copied), 'file')} named in {INCLUDE_FILE} "
                        "into the worktree.", plan.id)
    setup = await _run_setup(rt, plan, root) if rt.settings.workflow.worktree_setup else None
    _tell_branch(rt, plan, _message(included, setup))
    if setup is not None and not setup.ok:
        reason = f"the worktree setup failed: {setup.reason}"
        return rt.apply(plan.id, SetupFailed(reason=reason[:500], command=setup.command[:500]), Actor.SYSTEM)
    mark_ready(rt, plan, setup="none" if setup is None else "ok")
    return None
