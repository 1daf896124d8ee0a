"""`tunaflow status [PATH] [--json] [--short]`: print the project's plans, branch tree and session links.

Read-only: a project without ``.tunaflow/`` has nothing to show, and status never creates it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tunaflow_tui.core.storage import StorageError, Store
from tunaflow_tui.core.storage.records import PlanEventRecord, PlanRecord
from tunaflow_tui.core.storage.store import database_path
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.workflow.event_text import event_text, plan_outcome
from tunaflow_tui.core.workflow.machine import failures_since_reset
from tunaflow_tui.core.workflow.phases import Phase, Waiting
from tunaflow_tui.core.workflow.service import WaitingDecision, WorkflowService, plain_json
from tunaflow_tui.runtime.plan_slots import queue_of
from tunaflow_tui.subcommands.arguments import is_directory
from tunaflow_tui.subcommands.branch_json import branch_line, branch_tree_json, link_json

SHORT_TITLE = 30
_SHORT_KIND = {
    Waiting.APPROVAL: "approve",
    Waiting.REVIEW: "review",
    Waiting.DOOM_LOOP: "doom loop",
    Waiting.DEV_STALLED: "dev stalled",
    Waiting.REVIEW_ERROR: "review error",
    Waiting.SETUP_FAILED: "setup failed",
    Waiting.MERGE_CONFLICT: "merge conflict",
    Waiting.CONFLICT_UNRESOLVED: "conflict unresolved",
    Waiting.START_REVIEW: "start review",
    Waiting.INTERRUPTED: "interrupted",
    Waiting.REVISION: "revision",
    Waiting.MERGE: "merge",
    Waiting.HELD: "held",
    Waiting.WORKING: "working",
    Waiting.NOTHING: "nothing",
}
_TICK = {"done": "[x]", "failed": "[!]"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow status`."""
    parser.add_argument("path", nargs="?", default=".", metavar="PATH", help="the project (default: .)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print plans and branches as JSON")
    output.add_argument("--short", action="store_true", help="one line for a tmux status bar")


def plan_cost(store: Store, plan: PlanRecord) -> float | None:
    """What the plan's agents cost in its own conversations (Developer, reviewers), where the engines
    reported a cost; None when none did."""
    total: float | None = None
    for branch_id in (plan.impl_branch_id, plan.review_branch_id):
        if branch_id is None:
            continue
        for message in store.list_messages(f"branch:{branch_id}", limit=10_000):
            if message.role == "assistant" and message.usage.cost_usd is not None:
                total = (total or 0.0) + message.usage.cost_usd
    return None if total is None else round(total, 6)  # (a sum of floats: no 0.037500000000000006)


def _plan_json(plan: PlanRecord, events: Sequence[PlanEventRecord], service: WorkflowService, store: Store,
               queue: Mapping[int, int] | None = None) -> dict[str, Any]:
    held = plan.phase == Phase.HELD
    pending = None
    if plan.pending_decision is not None:
        pending = {"kind": plan.pending_decision, "held": held, "detail": plain_json(plan.pending_detail)}
    way = service.way_of(plan, events)
    outcome = plan_outcome(events)
    last = events[-1] if events else None
    return {
        "id": plan.id,
        "title": plan.title,
        "slug": plan.slug,
        "phase": plan.phase,
        "in_flight": not Phase(plan.phase).is_terminal,
        "queued": (queue or {}).get(plan.id),
        "held_from": plan.held_from,
        "subtasks": [{"index": s.index, "title": s.title, "status": s.status} for s in plan.subtasks],
        "failures_since_reset": failures_since_reset(events),
        "pending_decision": pending,
        "waiting": {
            "kind": way.waiting.value,
            "for_you": way.asks_the_user,
            "held": way.held,
            "summary": way.summary,
            "decisions": [decision.value for decision in way.decisions],
            "confirm": {decision.value: text for decision, text in way.confirm.items()},
        },
        "outcome": None if outcome is None else {"kind": outcome.kind, "text": outcome.text,
                                                 "reason": outcome.reason},
        "last_event": None if last is None else {"type": last.type, "actor": last.actor,
                                                 "text": event_text(last.type, last.detail)},
        "implementation_branch_id": plan.impl_branch_id,
        "review_branch_id": plan.review_branch_id,
        "cost_usd": plan_cost(store, plan),
    }


def _inert(value: Any) -> Any:
    """``value`` with every string in it neutralised (titles, findings and labels come from agents).

    JSON escapes C0 controls but passes C1 controls and bidi overrides through as they are, and a
    script that prints a title from this output would hand them to its terminal.
    """
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, dict):
        return {_inert(key): _inert(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_inert(item) for item in value]
    return value


def collect(project: Path) -> tuple[dict[str, Any], tuple[WaitingDecision, ...]]:
    """The status document of ``project`` and its pending decisions (empty when there is no database)."""
    document: dict[str, Any] = {"project": str(project), "plans": [], "branches": [], "session_links": []}
    if not database_path(project).is_file():
        return document, ()
    with Store.open(project) as store:
        if store.read_only is not None:
            document["read_only"] = store.read_only
        service = WorkflowService(store)
        plans = store.list_plans()
        events_of = {plan.id: store.list_plan_events(plan.id) for plan in plans}  # each plan's read once
        queue = {queued.plan_id: queued.position for queued in queue_of((p, events_of[p.id]) for p in plans)}
        document["plans"] = _inert([_plan_json(plan, events_of[plan.id], service, store, queue) for plan in plans])
        document["branches"] = branch_tree_json(store)
        document["session_links"] = [link_json(link) for link in store.all_session_links()]
        from tunaflow_tui.core.memory.model_files import MODEL_ID

        counts = store.embedding_counts(MODEL_ID)
        document["memory"] = {"messages": counts.total, "embedded": counts.embedded}
        return document, service.pending_decisions(events_of=events_of)


def _clip(text: str, limit: int) -> str:
    text = " ".join(neutralize(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_short(document: dict[str, Any], pending: tuple[WaitingDecision, ...]) -> str:
    """One line: how many plans, how many decisions wait, and the one f2 reaches first (the oldest)."""
    count = len(document["plans"])
    line = f"tunaflow: {count} plan{'' if count == 1 else 's'}"
    if pending:
        newest = pending[0]
        what = f'{_SHORT_KIND[newest.kind]} "{_clip(newest.plan_title, SHORT_TITLE)}"'
        more = f", +{len(pending) - 1}" if len(pending) > 1 else ""
        line += f" · {len(pending)} waiting ({what}{more})"
    return line


def render_text(document: dict[str, Any]) -> str:
    """A readable listing of plans (with subtasks) and branches."""
    lines = [f"Project: {neutralize(document['project'])}", ""]
    plans = document["plans"]
    flying = sum(1 for plan in plans if plan["in_flight"])
    lines.append(f"Plans ({len(plans)}, {flying} in flight)" if plans else "Plans: none")
    for plan in plans:
        phase = plan["phase"] + (f" (from {plan['held_from']})" if plan["held_from"] else "")
        lines.append(f"  #{plan['id']:<3} {_clip(plan['title'], 60)}  [{plan['slug']}]  {phase}")
        waiting = plan["waiting"]
        pending = plan["pending_decision"]
        if plan["queued"] is not None:
            lines.append(f"       queued: number {plan['queued']} in line — starts by itself when a place frees "
                         "(max_parallel_plans)")
        elif waiting["for_you"]:
            verdict = pending["detail"].get("verdict") if pending else None
            suffix = f" (verdict: {verdict})" if verdict else ""
            suffix += " (on hold)" if waiting["held"] else ""
            lines.append(f"       waiting for you: {_SHORT_KIND[Waiting(waiting['kind'])]}{suffix}"
                         f" — {_clip(waiting['summary'], 120)}")
        elif waiting["kind"] in (Waiting.WORKING, Waiting.MERGE):
            lines.append(f"       {_clip(waiting['summary'], 120)}")
        if plan["outcome"] is not None:
            lines.append(f"       outcome: {_clip(plan['outcome']['text'], 160)}")
        elif plan["last_event"] is not None:
            lines.append(f"       last: {_clip(plan['last_event']['text'], 160)}")
        for sub in plan["subtasks"]:
            tick = _TICK.get(sub["status"], "[ ]")
            lines.append(f"       {tick} {sub['index']}. {_clip(sub['title'], 70)}")
        if plan["cost_usd"] is not None:
            lines.append(f"       cost: ${plan['cost_usd']:.4f}")
        impl = plan["implementation_branch_id"]
        review = plan["review_branch_id"]
        lines.append(
            f"       failures since reset: {plan['failures_since_reset']}"
            f" · implementation branch: {'-' if impl is None else f'#{impl}'}"
            f" · review branch: {'-' if review is None else f'#{review}'}"
        )
    lines.append("")
    branches = document["branches"]
    lines.append(f"Branches ({len(branches)})" if branches else "Branches: none")
    for branch in branches:
        lines.append("  " + branch_line(branch))
    links = document.get("session_links") or []
    if links:
        lines += ["", f"Session links ({len(links)})"]
    for link in links:
        lines.append(f"  {link['from_conversation_id']} ← {link['to_conversation_id']} ({link['kind']}): "
                     f"{_clip(link['note'], 100)}")
    memory = document.get("memory")
    if memory is not None:
        lines.append("")
        done = "all" if memory["embedded"] >= memory["messages"] else f"{memory['embedded']:,} of"
        lines.append(f"Memory: {done} {memory['messages']:,} finished messages embedded for search by meaning")
    return "\n".join(lines)


def _write(text: str) -> None:
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:  # UTF-8 whatever the locale says, so Korean titles never fail to print
        sys.stdout.flush()
        buffer.write((text + "\n").encode("utf-8"))
        buffer.flush()
    else:
        sys.stdout.write(text + "\n")


def run(args: argparse.Namespace) -> int:
    """Print the status; exit 2 if PATH is not a directory, 1 if the database cannot be read."""
    project = Path(args.path).expanduser().resolve()
    if not is_directory(str(project)):
        print(f"tunaflow status: {args.path} is not a directory", file=sys.stderr)
        return 2
    try:
        document, pending = collect(project)
    except StorageError as exc:
        print(f"tunaflow status: {exc}", file=sys.stderr)
        return 1
    from tunaflow_tui.subcommands.read_only import say_read_only

    say_read_only("status", document.get("read_only"))
    if args.json:
        _write(json.dumps(document, ensure_ascii=False, indent=2))
    elif args.short:
        _write(render_short(document, pending))
    else:
        _write(render_text(document))
    return 0
