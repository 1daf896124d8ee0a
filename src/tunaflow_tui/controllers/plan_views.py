"""Plans, verdicts, branches and usage from the store, as the immutable views the widgets take.

Every string that an agent or the user wrote (titles, subtasks, findings, errors, labels, file
names) is made inert here, once, with :func:`neutralize`: the widgets draw views as they are.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.records import BranchRecord, PlanEventRecord, PlanRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.workflow import AggregateVerdict
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.event_text import event_text
from tunaflow_tui.core.workflow.phases import PendingDecision, Phase, PlanEventType
from tunaflow_tui.core.workflow.verdicts import ReviewStanding
from tunaflow_tui.core.workflow.ways import WayOn
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


def way_view(plan: PlanRecord, way: WayOn) -> WayView:
    """A plan waiting for the user without a proposal or verdict to show, as a card with its ways on."""
    return WayView(plan.id, inert_line(plan.title), inert_line(way.summary),
                   tuple(str(d) for d in way.decisions), tuple(str(d) for d in way.confirm), way.held)


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


def plan_usage(store: Store, plan: PlanRecord) -> str:
    """Tokens (and cost where known) per role in the plan's branches, one line per role."""
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
    lines = []
    order = ["architect", "developer", "reviewer", "verifier"]
    ranked = sorted(totals.items(), key=lambda item: (order.index(item[0]) if item[0] in order else len(order), item[0]))
    for role, (tokens_in, tokens_out, cost, priced) in ranked:
        line = f"{role:<10} {int(tokens_in):,} in · {int(tokens_out):,} out"
        if priced:
            line += f" · ${cost:.4f}"
        lines.append(line)
    return "\n".join(lines)


def plan_summary(store: Store, plan: PlanRecord, project_dir: Path, failures: int = 0,
                 all_slugs: Iterable[str] | None = None) -> PlanSummaryView:
    """Everything the workflow view shows about one plan.

    ``all_slugs``: every plan's slug (for :func:`plan_documents`); read from the store when not
    given, so a caller summarising every plan passes the list it already has.
    """
    events = store.list_plan_events(plan.id)
    if all_slugs is None:
        all_slugs = [other.slug for other in store.list_plans()]
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
        usage_text=plan_usage(store, plan),
    )


def branch_view(store: Store, branch_id: int, *, live: bool = False) -> BranchView | None:
    """A branch for the pane header."""
    from tunaflow_tui.controllers.branch_views import branch_view as view

    return view(store, branch_id, live=live)


def sidebar_sections(store: Store, live: Collection[int] = ()) -> SidebarSections:
    """The sidebar: main conversation, active branches and roundtables, the archive, and every plan.

    A plan's implementation and review branches are branches; only a roundtable the user convened
    is listed under Roundtables (a review runs in a branch with mode ``roundtable``, but it is the
    plan's review, not a discussion). Branches forked from branches are nested under them; ``live``
    names the branches an agent is writing in.
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
        plans=tuple(SidebarItem("plan", p.id, inert_line(p.title), p.phase) for p in store.list_plans()),
    )


def is_roundtable(branch: BranchRecord) -> bool:
    """True for a roundtable the user convened, not a plan's review branch."""
    return branch.mode == "roundtable" and branch.kind not in PLAN_BRANCH_KINDS
