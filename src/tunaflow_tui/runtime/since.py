"""What a turn sends: the full ContextPack to a new session, or what a resumed session has not seen.

A resumed native session holds its own turns, but not what entered its conversation from elsewhere
after its last turn: adopt records with their summaries, decision records with the user's words,
merges, removed worktrees, messages written while another engine answered, new session links. The
section "Since your last turn" carries them, with the retrieved history for the request minus the
chunks the session already got. What each session was sent is kept in the store
(:class:`~tunaflow_tui.core.storage.deliveries.Delivered`), so nothing is sent to it twice.

A session whose own history was summarised into compressed memory since its last turn is not resumed:
the next turn starts a new one with the full pack (see :func:`compressed_since`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tunaflow_tui.core.memory.project_search import ProjectHit
from tunaflow_tui.core.personas import load_persona
from tunaflow_tui.core.storage.deliveries import Delivered, DeliveryItem
from tunaflow_tui.core.storage.records import MessageRecord, PlanRecord
from tunaflow_tui.core.workflow.phases import PlanEventType
from tunaflow_tui.runtime.context import ContextPack, SectionSpec, assemble
from tunaflow_tui.runtime.context_builder import (
    NEWEST_SUMMARIES,
    PLANNING_ROLES,
    RETRIEVING_ROLES,
    ContextBuilder,
    PackSources,
    format_turn,
)
from tunaflow_tui.runtime.links import cited_link, pack_links
from tunaflow_tui.runtime.plans_in_flight import SECTION_TITLE, in_flight_text, plan_pointer
from tunaflow_tui.runtime.ports import PackSourceData, ProjectData
from tunaflow_tui.runtime.record_writer import conversation_of
from tunaflow_tui.runtime.role_prompts import plan_brief
from tunaflow_tui.runtime.tokens import default_counter


class PackContext(PackSourceData, Protocol):
    """What building a turn's prompt reads: the pack's sources and the builder of a new session's pack."""

    @property
    def context(self) -> ContextBuilder:
        """Builds the ContextPack a new session gets."""


SINCE_TITLE = "Since your last turn"
#: Messages of a conversation read for one "since" section: more than its budget holds.
SINCE_MESSAGES = 200
_LEFT_OUT = "[{count} earlier items left out to fit the budget]"


@dataclass(frozen=True, slots=True)
class TurnPrompt:
    """A turn's prompt as it is (or would be) sent, and what to remember the session got once it is."""

    pack: ContextPack
    resumed: bool
    deliveries: tuple[DeliveryItem, ...]

    @property
    def prompt(self) -> str:
        """The exact text sent: a resumed turn with nothing new is the request alone."""
        if self.resumed and not any(section.text.strip() for section in self.pack.sections):
            return self.pack.request
        return self.pack.render()


def delivered_to(rt: ProjectData, engine: str, session_id: str, conversation_id: str) -> Delivered:
    """What the session was sent; for a session without rows, its own last reply marks what it knows."""
    delivered = rt.store.delivered(engine, session_id)
    if delivered.known:
        return delivered
    last = rt.store.last_message_of_session(conversation_id, session_id)
    through = last if last is not None else rt.store.newest_message_id(conversation_id)
    return Delivered(from_id=0, through_id=through)


def compressed_since(rt: ProjectData, engine: str, session_id: str, conversation_id: str) -> bool:
    """True when a topic summary written after the session's last turn covers messages the session holds.

    The session's own history is then the older part that compressed memory replaced: a new session with
    the full pack (summaries, then the recent turns) takes over. A summary re-done over messages from
    before the session started changes nothing for it.
    """
    delivered = rt.store.delivered(engine, session_id)
    if delivered.summaries_through is None or delivered.from_id is None:
        return False
    return any(summary.id > delivered.summaries_through and summary.last_message_id >= delivered.from_id
               for summary in rt.store.list_summaries(conversation_id, newest=NEWEST_SUMMARIES))


def _watermarks(rt: ProjectData, conversation_id: str) -> list[DeliveryItem]:
    return [DeliveryItem("through", rt.store.newest_message_id(conversation_id)),
            DeliveryItem("events", rt.store.newest_plan_event_id()),
            DeliveryItem("summaries", rt.store.newest_summary_id(conversation_id))]


def _sent_hits(pack: ContextPack, hits: tuple[ProjectHit, ...]) -> list[DeliveryItem]:
    """The retrieved chunks that made it into the pack's "retrieved" section (a cut may drop some)."""
    from tunaflow_tui.runtime.context_builder import ContextBuilder

    text = next((s.text for s in pack.sections if s.name == "retrieved"), "")
    return [DeliveryItem("chunk", hit.message.id, hit.chunk_start) for hit in hits
            if ContextBuilder.format_hit(hit) in text]


def fresh_deliveries(rt: ProjectData, conversation_id: str, pack: ContextPack, sources: PackSources,
                     exclude_message_id: int | None) -> tuple[DeliveryItem, ...]:
    """What a new session is sent with the full pack: the recent turns on, its chunks and links."""
    first = min((*sources.recent_ids, *((exclude_message_id,) if exclude_message_id is not None else ())),
                default=rt.store.newest_message_id(conversation_id))
    items = [DeliveryItem("from", first), *_watermarks(rt, conversation_id), *_sent_hits(pack, sources.hits)]
    links_text = next((s.text for s in pack.sections if s.name == "links"), "")
    items += [DeliveryItem("link", link.id) for link in sources.links if cited_link(rt, link) in links_text]
    return tuple(items)


def fork_deliveries(rt: ProjectData, conversation_id: str) -> tuple[DeliveryItem, ...]:
    """What a branch's forked session knows after its first turn: the branch so far."""
    return (DeliveryItem("from", 0), *_watermarks(rt, conversation_id))


def _removed_worktrees(rt: ProjectData, conversation_id: str, after_event: int | None) -> list[str]:
    """Worktrees of this conversation's plans removed after plan event ``after_event`` (no record says so)."""
    if after_event is None:
        return []
    lines = []
    for event in rt.store.plan_events_after(after_event, (PlanEventType.WORKTREE_REMOVED,)):
        plan = rt.store.get_plan(event.plan_id)
        if plan is None or conversation_of(rt, plan) != conversation_id:
            continue
        branch = f" (its branch {plan.git_branch} stays)" if plan.git_branch else ""
        lines.append(f"- The worktree of plan {plan.id} “{plan.title}” was removed{branch}.")
    return lines


def _unseen_messages(rt: ProjectData, conversation_id: str, session_id: str, delivered: Delivered,
                     exclude_message_id: int | None) -> list[MessageRecord]:
    """Messages of the conversation after the session's last turn that it did not write itself."""
    after = delivered.through_id or 0
    # the newest ones: the section keeps its tail when it is cut, so the oldest are the ones to lose
    messages = rt.store.list_messages(conversation_id, limit=SINCE_MESSAGES)
    return [m for m in messages
            if m.id > after and m.id != exclude_message_id and m.native_session_id != session_id and m.content.strip()
            and m.status != "streaming"]


def since_text(rt: ProjectData, conversation_id: str, session_id: str, delivered: Delivered,
               exclude_message_id: int | None) -> tuple[str, tuple[MessageRecord, ...], tuple[int, ...]]:
    """The "since your last turn" text, the messages it quotes and the links it newly cites.

    Whole items within ``[context] since_tokens``, the newest kept: older ones that do not fit are
    left out with a line saying how many.
    """
    unseen = _unseen_messages(rt, conversation_id, session_id, delivered, exclude_message_id)
    parts = [format_turn(m) for m in unseen]
    removed = _removed_worktrees(rt, conversation_id, delivered.events_through)
    if removed:
        parts.append("\n".join(removed))
    new_links = [link for link in pack_links(rt, conversation_id) if link.id not in delivered.links]
    if new_links:
        parts.append("Newly linked sessions:\n" + "\n".join(f"- {cited_link(rt, link)}" for link in new_links))
    counter = default_counter()
    budget = rt.settings.context.since_tokens - counter.count(_LEFT_OUT.format(count=len(parts)))
    kept: list[str] = []
    used = 0
    for part in reversed(parts):
        cost = counter.count(part) + 2
        if kept and used + cost > budget:
            break
        kept.insert(0, part)
        used += cost
    if len(kept) < len(parts):
        kept.insert(0, _LEFT_OUT.format(count=len(parts) - len(kept)))
    return "\n\n".join(kept), tuple(unseen), tuple(link.id for link in new_links)


def _planning_sections(rt: ProjectData, role: str, request: str, plan: PlanRecord | None) -> list[SectionSpec]:
    """For the Architect's resumed session: every plan in flight as it stands now (phases move between
    turns), and the plan the user's message points at (``#N …``) as it stands now."""
    if role not in PLANNING_ROLES:
        return []
    cfg = rt.settings.context
    specs = []
    if plan is not None and plan_pointer(request) == plan.id:
        specs.append(SectionSpec("plan", f"Active plan ({plan.phase})", plan_brief(plan), 1, budget=cfg.plan_tokens))
    in_flight = in_flight_text(rt.store)
    if in_flight:
        specs.append(SectionSpec("plans", SECTION_TITLE, in_flight, 2, budget=cfg.plan_tokens))
    return specs


def resumed_turn(rt: PackContext, *, role: str, conversation_id: str, request: str, engine: str,
                 session_id: str, findings: tuple[str, ...], exclude_message_id: int | None,
                 system: str, plan: PlanRecord | None = None) -> TurnPrompt:
    """The prompt of a resumed turn: what the session has not seen, the new retrieved history, the request.

    The Architect's also names the plans in flight, and the plan the message points at (see
    :func:`_planning_sections`).
    """
    cfg = rt.settings.context
    delivered = delivered_to(rt, engine, session_id, conversation_id)
    retrieving = role in RETRIEVING_ROLES and cfg.retrieved_tokens > 0 and rt.settings.memory.retrieved_chunks > 0
    if retrieving:
        rt.memory.prepare_retrieval(request)
    items = _watermarks(rt, conversation_id)
    text, unseen, link_ids = since_text(rt, conversation_id, session_id, delivered, exclude_message_id)
    specs = _planning_sections(rt, role, request, plan)
    if findings:
        specs.append(SectionSpec("findings", "Review findings", "\n".join(f"- {f}" for f in findings), 1,
                                 budget=cfg.findings_tokens))
    if text:
        specs.append(SectionSpec("since", SINCE_TITLE, text, 2, keep="tail", budget=cfg.since_tokens))
    hits: tuple[ProjectHit, ...] = ()
    if retrieving:
        low = delivered.from_id if delivered.from_id is not None else 0
        high = delivered.through_id or 0

        def known(hit: ProjectHit) -> bool:
            own = hit.message.conversation_id == conversation_id and low <= hit.message.id <= high
            return own or (hit.message.id, hit.chunk_start) in delivered.chunks

        excluded = {m.id for m in unseen}
        if exclude_message_id is not None:
            excluded.add(exclude_message_id)
        found, hits = rt.context.retrieved_hits(request, exclude_message_ids=excluded, skip=known)
        if found:
            specs.append(SectionSpec("retrieved", "Retrieved from the project's history", found, 6,
                                     budget=cfg.retrieved_tokens))
    pack = assemble(specs, cfg.max_tokens, request=request, system=system)
    since_section = next((s for s in pack.sections if s.name == "since"), None)
    if since_section is not None and since_section.text.strip():
        items += [DeliveryItem("link", link_id) for link_id in link_ids]
    items += _sent_hits(pack, hits)
    if not delivered.known:  # a session from before tunaflow kept track: all it wrote, it knows
        items.append(DeliveryItem("from", 0))
    return TurnPrompt(pack, True, tuple(items))


def full_turn(rt: PackContext, *, role: str, conversation_id: str, request: str, plan: PlanRecord | None,
              findings: tuple[str, ...], exclude_message_id: int | None, system: str,
              history: bool) -> TurnPrompt:
    """The prompt of a turn on a new session: the full ContextPack."""
    pack, sources = rt.context.build_with_sources(
        role=role, conversation_id=conversation_id, request=request, plan=plan, findings=findings,
        exclude_message_id=exclude_message_id, system=system, history=history)
    deliveries = fresh_deliveries(rt, conversation_id, pack, sources, exclude_message_id) if history else ()
    return TurnPrompt(pack, False, deliveries)


def forked_turn(rt: ProjectData, *, conversation_id: str, request: str, system: str) -> TurnPrompt:
    """The prompt of a branch's first turn in a fork of its parent's session: the request alone."""
    pack = assemble([], rt.settings.context.max_tokens, request=request, system=system)
    return TurnPrompt(pack, True, fork_deliveries(rt, conversation_id))


def remember(rt: ProjectData, *, engine: str, conversation_id: str, session_id: str | None,
             resumed_from: str | None, fork: bool, turn: TurnPrompt) -> None:
    """After a turn the agent read: remember what its session (``session_id``, as the engine named it) got.

    A session the engine renamed while resuming keeps what the old name was sent (a fork is a session
    of another conversation: it starts from what its own turn sent).
    """
    if not session_id or not turn.deliveries:
        return
    if resumed_from and not fork and resumed_from != session_id:
        rt.store.copy_deliveries(engine, resumed_from, session_id)
    rt.store.record_delivery(engine, session_id, conversation_id, turn.deliveries)


def session_to_resume(rt: ProjectData, conversation_id: str, engine_name: str, *,
                      fresh_session: bool = False, blind: bool = False) -> str | None:
    """The native session a turn on ``engine_name`` in ``conversation_id`` resumes, if any.

    None for a fresh or blind turn, a conversation whose session belongs to another engine, and a
    session whose own history was summarised since its last turn (the full pack goes to a new one).
    """
    conversation = rt.store.get_conversation(conversation_id)
    if fresh_session or blind or conversation is None or not conversation.native_session_id \
            or conversation.native_engine != engine_name:
        return None
    if compressed_since(rt, engine_name, conversation.native_session_id, conversation_id):
        return None
    return conversation.native_session_id


def prepare_turn(rt: PackContext, role: str, conversation_id: str, request: str, *, engine: str,
                 resume: str | None, fork: bool = False, plan: PlanRecord | None = None,
                 findings: tuple[str, ...] = (), exclude_message_id: int | None = None,
                 system: str | None = None, blind: bool = False) -> TurnPrompt:
    """The prompt a turn sends (nothing is sent or remembered).

    A new session gets the full ContextPack; a resumed one what it has not seen; a fork of the
    parent's session the request alone. A worker thread: it reads git and the database.
    """
    persona = system if system is not None else load_persona(role, rt.project_dir)
    if resume and fork:
        return forked_turn(rt, conversation_id=conversation_id, request=request, system=persona)
    if resume and not blind:
        return resumed_turn(rt, role=role, conversation_id=conversation_id, request=request, engine=engine,
                            session_id=resume, findings=findings, exclude_message_id=exclude_message_id,
                            system=persona, plan=plan)
    return full_turn(rt, role=role, conversation_id=conversation_id, request=request, plan=plan,
                     findings=findings, exclude_message_id=exclude_message_id, system=persona, history=not blind)
