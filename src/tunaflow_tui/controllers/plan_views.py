"""Plans, verdicts, branches and usage from the store, as the immutable views the widgets take.

Every string that an agent or the user wrote (titles, subtasks, findings, errors, labels, file
names) is made inert here, once, with :func:`neutralize`: the widgets draw views as they are.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.records import BranchRecord, PlanEventRecord, PlanRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.workflow import AggregateVerdict
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.event_text import conflict_files, event_text
from tunaflow_tui.core.workflow.phases import PendingDecision, Phase, PlanEventType, Waiting
from tunaflow_tui.core.workflow.verdicts import ReviewStanding
from tunaflow_tui.core.workflow.ways import WayOn, conflict_summary
from tunaflow_tui.runtime.plan_slots import may_wait, open_wait, queued_plans
from tunaflow_tui.viewmodels import board
from tunaflow_tui.viewmodels.plan_rows import (
    PLAN_BRANCH_KINDS,
    BranchView,
    EventView,
    FailureView,
    PlanSummaryView,
    ProposalView,
    SeatView,
    SidebarItem,
    SidebarSections,
    SubtaskView,
    VerdictView,
    WayView,
)

_WHITESPACE_RUN = re.compile(r"\s+")
_CONFLICTS = frozenset({PendingDecision.MERGE_CONFLICT, PendingDecision.CONFLICT_UNRESOLVED})


def inert(text: str) -> str:
    """``text`` without terminal control sequences (newlines and tabs stay)."""
    return neutralize(text)


def inert_line(text: str) -> str:
    """``text`` without control sequences, on one line: for labels, titles and timeline rows."""
    text = neutralize(text)
    return text if text.isprintable() else _WHITESPACE_RUN.sub(" ", text).strip()


def inert_all(items: Iterable[object]) -> tuple[str, ...]:
    """Each item as inert text."""
    return tuple(neutralize(str(item)) for item in items)


def subtasks(plan: PlanRecord) -> tuple[SubtaskView, ...]:
    """The plan's subtasks as views."""
    return tuple(SubtaskView(s.index, inert_line(s.title), inert(s.details), s.status) for s in plan.subtasks)


def proposal_view(plan: PlanRecord, decision: str | None = None) -> ProposalView:
    """The plan as a proposal card (a held plan shows as held and can still be approved)."""
    if decision is None and plan.phase == Phase.HELD and plan.pending_decision == PendingDecision.APPROVAL:
        decision = Decision.HOLD
    return ProposalView(
        plan_id=plan.id,
        message_id=plan.source_message_id or 0,
        title=inert_line(plan.title),
        subtasks=subtasks(plan),
        description=inert(plan.description),
        expected_outcome=None if plan.expected_outcome is None else inert(plan.expected_outcome),
        constraints=inert_all(plan.constraints),
        non_goals=inert_all(plan.non_goals),
        revision=plan.revision + 1,  # the store counts revisions from 0, the card from 1
        decision=decision,
    )


def aggregate_of(detail: Mapping[str, object]) -> AggregateVerdict | None:
    """The aggregate verdict kept with a pending review decision."""
    raw = detail.get("aggregate")
    return AggregateVerdict.from_json(raw) if isinstance(raw, Mapping) else None


def way_view(plan: PlanRecord, way: WayOn, events: Sequence[PlanEventRecord] = ()) -> WayView:
    """A plan waiting for the user without a proposal or verdict to show, as a card with its ways on; a
    merge conflict's card names the files its conflict event recorded (``events``: the plan's, oldest first)."""
    files = conflict_files(events) if plan.pending_decision in _CONFLICTS else ()
    summary = way.summary
    if files and plan.pending_decision:  # the card lists them one per line: its sentence only counts them
        summary = conflict_summary(PendingDecision(plan.pending_decision), plan.pending_detail, listed=len(files))
        summary = f"on hold — {summary}" if way.held else summary
    return WayView(plan.id, inert_line(plan.title), inert_line(summary),
                   tuple(str(d) for d in way.decisions), tuple(str(d) for d in way.confirm), way.held,
                   files=tuple(inert_line(path) for path in files))


def verdict_view(plan: PlanRecord, decision: str | None = None, way: WayOn | None = None) -> VerdictView:
    """The pending review (or review error) of a plan as a verdict card; ``way`` says which decisions
    are available now (an incomplete or failed review is accepted only with a confirmation)."""
    detail = dict(plan.pending_detail or {})
    standing = ReviewStanding.of(detail)
    answered = "" if standing.complete or not standing.seats else standing.seats_text
    decisions = None if way is None else tuple(str(d) for d in way.decisions)
    confirm = () if way is None else tuple(str(d) for d in way.confirm)
    held = way is not None and way.held
    agg = aggregate_of(detail)
    tests = detail.get("tests")
    test_status = test_summary = test_environment = ""
    if isinstance(tests, Mapping):
        test_status = inert_line(str(tests.get("status") or ""))
        test_summary = inert(str(tests.get("summary") or ""))
        test_environment = inert_line(str(tests.get("environment") or ""))
    raw_modified = detail.get("reviewer_modified")
    modified = inert_all(raw_modified) if isinstance(raw_modified, list | tuple) else ()
    if agg is None:
        return VerdictView(plan.id, plan.review_round, None, test_summary=test_summary,
                           test_status=test_status, test_environment=test_environment,
                           reviewer_modified=modified, decision=decision, decisions=decisions, confirm=confirm,
                           answered=answered, held=held)
    seats = tuple(
        SeatView(
            seat=inert_line(s.seat.title()),
            engine=inert_line(s.engine),
            verdict=s.verdict,
            scores=tuple((inert_line(name), value) for name, value in sorted(s.scores.items())),
            findings=inert_all(s.findings),
            recommendations=inert_all(s.recommendations),
            error=inert(s.error or "no verdict") if s.is_error else None,
        )
        for s in agg.seats
    )
    scores = tuple((inert_line(name), summary.mean, float(summary.spread))
                   for name, summary in sorted(agg.scores.items()))
    return VerdictView(
        plan_id=plan.id,
        round_no=plan.review_round,
        verdict=agg.verdict,
        seats=seats,
        findings=inert_all(agg.findings),
        recommendations=inert_all(agg.recommendations),
        scores=scores,
        test_summary=test_summary,
        test_status=test_status,
        test_environment=test_environment,
        reviewer_modified=modified,
        decision=decision,
        decisions=decisions,
        confirm=confirm,
        answered=answered,
        held=held,
    )


def failure_history(events: tuple[PlanEventRecord, ...]) -> tuple[FailureView, ...]:
    """The failed review rounds since the last doom-loop answer or plan revision."""
    failures: list[FailureView] = []
    for event in events:
        if event.type in (PlanEventType.DOOM_LOOP_ESCALATED, PlanEventType.REVISION_REQUESTED,
                          PlanEventType.REDESIGN_REQUESTED):
            failures = []
        elif event.type == PlanEventType.REVIEW_FINISHED and event.detail.get("verdict") == "fail":
            raw = event.detail.get("aggregate")
            findings = AggregateVerdict.from_json(raw).findings if isinstance(raw, Mapping) else ()
            round_no = event.detail.get("round")
            failures.append(FailureView(int(round_no) if isinstance(round_no, int) else len(failures) + 1,
                                        "fail", inert_all(findings)))
    return tuple(failures)


def event_time(event: PlanEventRecord) -> str:
    """When an event happened, as the timeline shows it."""
    return event.created_at.astimezone().strftime("%H:%M:%S")


def _event_text(event: PlanEventRecord) -> str:
    """The event's sentence, the same words ``tunaflow status`` and ``tunaflow export`` use."""
    return inert_line(event_text(event.type, dict(event.detail)))


def plan_documents(plan: PlanRecord, project_dir: Path,
                   other_slugs: Iterable[str] = ()) -> tuple[tuple[str, str], ...]:
    """The plan's documents in its worktree (or in the project when it works in place).

    The plan first, then its tasks, its reviews by round, its result, and any other document named
    after it. ``other_slugs`` (the other plans') keep e.g. ``add-mul-div.md`` out of ``add-mul``'s list.
    """
    root = Path(plan.worktree_path) if plan.worktree_path and Path(plan.worktree_path).is_dir() else project_dir
    folder = root / "docs" / "plans"
    if not folder.is_dir():
        return ()
    longer = [slug for slug in other_slugs if slug != plan.slug and slug.startswith(plan.slug)]

    def rank(name: str) -> int | None:
        if not (name.startswith(plan.slug) and name.endswith(".md")):
            return None
        rest = name[len(plan.slug):-len(".md")]
        if rest == "":
            return 0
        if not rest.startswith("-") or any(name[:-len(".md")] == s or name.startswith(s + "-") for s in longer):
            return None  # another plan's document
        for index, prefix in enumerate(("-task-", "-review-r", "-result"), start=1):
            if rest.startswith(prefix):
                return index
        return 4

    documents = [(r, path.name, path) for path in folder.glob(f"{plan.slug}*.md") if (r := rank(path.name)) is not None]
    return tuple((inert_line(name), str(path)) for _, name, path in sorted(documents))


UsageRow = tuple[str, int, int, float | None]
"""(role, tokens in, tokens out, cost in dollars or None where no price is known)."""


def plan_usage_rows(store: Store, plan: PlanRecord) -> tuple[UsageRow, ...]:
    """Tokens (and cost where known) per role in the plan's branches, the roles in the workflow's order."""
    totals: dict[str, list[float]] = {}
    for branch_id in (plan.impl_branch_id, plan.review_branch_id):
        if branch_id is None:
            continue
        for message in store.list_messages(f"branch:{branch_id}", limit=10_000):
            if message.role != "assistant":
                continue
            row = totals.setdefault(inert_line(message.persona or "agent"), [0, 0, 0.0, 0])
            row[0] += message.usage.input_tokens
            row[1] += message.usage.output_tokens
            if message.usage.cost_usd is not None:
                row[2] += message.usage.cost_usd
                row[3] = 1
    order = ["architect", "developer", "reviewer", "verifier"]
    ranked = sorted(totals.items(), key=lambda item: (order.index(item[0]) if item[0] in order else len(order), item[0]))
    return tuple((role, int(tokens_in), int(tokens_out), cost if priced else None)
                 for role, (tokens_in, tokens_out, cost, priced) in ranked)


def usage_text(rows: tuple[UsageRow, ...]) -> str:
    """One line per role: ``developer  1,200 in · 300 out · $0.0042``."""
    lines = []
    for role, tokens_in, tokens_out, cost in rows:
        line = f"{role:<10} {tokens_in:,} in · {tokens_out:,} out"
        if cost is not None:
            line += f" · ${cost:.4f}"
        lines.append(line)
    return "\n".join(lines)


def short_tokens(count: int) -> str:
    """``950``, ``12.4k``, ``1.2M``."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def cost_text(rows: tuple[UsageRow, ...]) -> str:
    """The plan's cost for its row: ``$0.42`` where any price is known, else ``12.4k tok``; empty: no usage."""
    costs = [cost for *_, cost in rows if cost is not None]
    if costs:
        total = sum(costs)
        return f"${total:.2f}" if total >= 0.01 or total == 0 else "<$0.01"
    tokens = sum(tokens_in + tokens_out for _, tokens_in, tokens_out, _ in rows)
    return f"{short_tokens(tokens)} tok" if tokens else ""


def plan_usage(store: Store, plan: PlanRecord) -> str:
    """Tokens (and cost where known) per role in the plan's branches, one line per role."""
    return usage_text(plan_usage_rows(store, plan))


def queued(plan: PlanRecord, events: Sequence[PlanEventRecord]) -> bool:
    """Waiting for a free place to develop in: the runtime queued it (``plan_queued``) and it has not left.

    The runtime's cap on parallel plans (``[workflow] max_parallel_plans``) queues a plan in the
    database, so the board and the sidebar of every process read the same queue (the step that
    waits for the place holds the plan, but nothing works on it yet). This is the one place the board asks.
    """
    return may_wait(plan) and open_wait(tuple(events)) is not None


def board_column(plan: PlanRecord, events: Sequence[PlanEventRecord], way: WayOn | None) -> str:
    """The board's group of the plan (``viewmodels.board``): what waits for the user comes first."""
    if Phase(plan.phase).is_terminal:
        return board.DONE
    if queued(plan, events):
        return board.QUEUED
    if plan.pending_decision is not None or (way is not None and way.asks_the_user):
        return board.WAITING
    return board.column_for_phase(plan.phase)


def _last(events: Sequence[PlanEventRecord], kind: PlanEventType) -> PlanEventRecord | None:
    return next((event for event in reversed(events) if event.type == kind), None)


def _findings(event: PlanEventRecord | None) -> tuple[str, ...]:
    raw = None if event is None else event.detail.get("aggregate")
    return inert_all(AggregateVerdict.from_json(raw).findings) if isinstance(raw, Mapping) else ()


def plan_summary(store: Store, plan: PlanRecord, project_dir: Path, failures: int = 0,
                 all_slugs: Iterable[str] | None = None, *, way: WayOn | None = None) -> PlanSummaryView:
    """Everything the workflow view shows about one plan.

    ``all_slugs``: every plan's slug (for :func:`plan_documents`); read from the store when not
    given, so a caller summarising every plan passes the list it already has. ``way``: what the plan
    waits on now (it places the plan on the board and says whether an agent works on it).
    """
    events = store.list_plan_events(plan.id)
    if all_slugs is None:
        all_slugs = [other.slug for other in store.list_plans()]
    usage = plan_usage_rows(store, plan)
    tests = _last(events, PlanEventType.TESTS_RAN)
    verdict = _last(events, PlanEventType.REVIEW_FINISHED)
    column = board_column(plan, events, way)
    return PlanSummaryView(
        plan_id=plan.id,
        title=inert_line(plan.title),
        slug=inert_line(plan.slug),
        phase=plan.phase,
        subtasks=subtasks(plan),
        pending=(plan.pending_decision or "").replace("_", " ") or None,
        failures=failures,
        events=tuple(EventView(event_time(e), inert_line(e.type), inert_line(e.actor), _event_text(e))
                     for e in events[-40:]),
        documents=plan_documents(plan, project_dir, all_slugs),
        usage_text=usage_text(usage),
        column=column,
        waiting="" if way is None else str(way.waiting),
        working=way is not None and way.waiting is Waiting.WORKING and column != board.QUEUED,
        review_round=plan.review_round,
        cost=cost_text(usage),
        tests="" if tests is None else _event_text(tests),
        verdict="" if verdict is None else _event_text(verdict),
        findings=_findings(verdict),
    )


class PlanWays(Protocol):
    """What the board asks of the workflow: how many reviews failed, and what each plan waits on."""

    def failures_since_reset(self, plan_id: int) -> int:
        """Failed review rounds since the last reset."""
        ...

    def way_on(self, plan_id: int, *, running: bool = False) -> WayOn:
        """What the plan waits on (``running``: an agent works on it in this process)."""
        ...


def board_summaries(store: Store, ways: PlanWays, project_dir: Path,
                    busy: Collection[int] = ()) -> tuple[PlanSummaryView, ...]:
    """Every plan as the board shows it; ``busy``: the plans this process works on now."""
    plans = store.list_plans()
    slugs = [plan.slug for plan in plans]
    return tuple(
        plan_summary(store, plan, project_dir, ways.failures_since_reset(plan.id), slugs,
                     way=ways.way_on(plan.id, running=plan.id in busy))
        for plan in plans
    )


def branch_view(store: Store, branch_id: int, *, live: bool = False) -> BranchView | None:
    """A branch for the pane header."""
    from tunaflow_tui.controllers.branch_views import branch_view as view

    return view(store, branch_id, live=live)


def sidebar_sections(store: Store, live: Collection[int] = (), busy: Collection[int] = ()) -> SidebarSections:
    """The sidebar: main conversation, active branches and roundtables, the archive, and every plan.

    A plan's implementation and review branches are branches; only a roundtable the user convened
    is listed under Roundtables (a review runs in a branch with mode ``roundtable``, but it is the
    plan's review, not a discussion). Branches forked from branches are nested under them; ``live``
    names the branches an agent is writing in, ``busy`` the plans this process works on.
    """
    from tunaflow_tui.controllers.branch_views import tree_items

    branches = store.list_branches()
    active = [b for b in branches if b.status == "active"]
    return SidebarSections(
        conversations=(SidebarItem("conversation", "main", "Main"),),
        branches=tree_items((b for b in active if not is_roundtable(b)),
                            lambda b: b.kind if b.kind != "general" else "", live),
        roundtables=tree_items((b for b in active if is_roundtable(b)), lambda _b: "", live),
        archive=tree_items((b for b in branches if b.status != "active"), lambda b: b.status, live),
        plans=plan_items(store, live, busy),
    )


def plan_items(store: Store, live: Collection[int] = (), busy: Collection[int] = ()) -> tuple[SidebarItem, ...]:
    """The sidebar's plans, each marked while an agent works on it or while it waits for the user; a plan
    approved whose Developer has not started is ``queued`` (as on the board).

    Working: this process works on it (``busy`` plans, ``live`` branches), or a live process — this one
    or another — holds the lease of a conversation its agents write in.
    """
    leased = {lease.conversation_id for lease in store.live_leases()}
    queue = {queued.plan_id for queued in queued_plans(store)}
    items = []
    for plan in store.list_plans():
        own = {f"branch:{b}" for b in (plan.impl_branch_id, plan.review_branch_id) if b is not None}
        if plan.phase in (Phase.CHAT, Phase.DRAFTING):
            own.add("main")
        terminal = Phase(plan.phase).is_terminal
        waiting = (plan.pending_decision is not None or plan.phase == Phase.HELD) and not terminal
        working = not terminal and not waiting and bool(
            plan.id in busy or own & leased
            or any(b in live for b in (plan.impl_branch_id, plan.review_branch_id) if b is not None))
        badge = str(plan.phase)
        if not waiting and plan.id in queue:
            badge, working = board.QUEUED, False  # its step waits for a place: nothing works on it yet
        items.append(SidebarItem("plan", plan.id, inert_line(plan.title), badge, live=working, waiting=waiting))
    return tuple(items)


def is_roundtable(branch: BranchRecord) -> bool:
    """True for a roundtable the user convened, not a plan's review branch."""
    return branch.mode == "roundtable" and branch.kind not in PLAN_BRANCH_KINDS
