"""Builds the ContextPack for a turn from what the database knows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.markers import scrub_markers
from tunaflow_tui.core.memory.project_search import ProjectHit
from tunaflow_tui.core.personas import load_persona
from tunaflow_tui.core.storage.records import MessageRecord, PlanRecord, SessionLinkRecord
from tunaflow_tui.runtime.context import ContextPack, SectionSpec, assemble
from tunaflow_tui.runtime.links import cited_link, pack_links
from tunaflow_tui.runtime.plans_in_flight import SECTION_TITLE, in_flight_text
from tunaflow_tui.runtime.role_prompts import plan_brief
from tunaflow_tui.runtime.tokens import default_counter

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import PackSourceData

ROLE_TITLES = {
    "user": "User",
    "architect": "Architect",
    "developer": "Developer",
    "reviewer": "Reviewer",
    "verifier": "Verifier",
    "synthesizer": "Synthesizer",
    "summarizer": "Summarizer",
}
INHERITED_TURNS = 4
MAX_LISTED_FILES = 30
#: Roles whose packs carry retrieved chunks; reviewers judge blind, from the plan and the diff alone.
RETRIEVING_ROLES = frozenset({"architect", "developer"})
#: Summaries read for a pack: more than any memory budget holds.
NEWEST_SUMMARIES = 64
#: Roles whose packs name every plan in flight (so a proposal can say which one it revises).
PLANNING_ROLES = frozenset({"architect"})
#: Roles that work in a plan's worktree: their "Project" section names it, its branch and base.
WORKTREE_ROLES = frozenset({"developer", "reviewer", "verifier"})


@dataclass(frozen=True, slots=True)
class PackSources:
    """What a pack was built from: the recent messages, the retrieved chunks and the links it cites."""

    recent_ids: tuple[int, ...] = ()
    hits: tuple[ProjectHit, ...] = ()
    links: tuple[SessionLinkRecord, ...] = ()


def format_turn(message: MessageRecord) -> str:
    """One message as a transcript entry (markers scrubbed)."""
    who = ROLE_TITLES.get(message.persona or message.role, (message.persona or message.role).title())
    if message.role == "user":
        who = "User"
    note = f" [{message.status}]" if message.status in ("interrupted", "error") else ""
    return f"**{who}**{note}: {scrub_markers(message.content).strip()}"


class ContextBuilder:
    """Assembles sections (project, plan, findings, inheritance, recent turns, links) within budgets."""

    def __init__(self, rt: PackSourceData) -> None:
        self._rt = rt

    def project_identity(self, plan: PlanRecord | None = None, *, worktree: bool = False) -> str:
        """Project name, path, git branch and its top-level entries.

        With ``worktree`` and a ``plan`` that has one, the path is the plan's worktree and the branch
        is the plan's own (``tunaflow/<slug>``) with the branch it was based on: where the Developer and
        the reviewers work, not the main tree.
        """
        rt = self._rt
        where = rt.project_dir
        lines = [f"Project: {rt.project_dir.name}"]
        if worktree and plan is not None and plan.worktree_path:
            where = Path(plan.worktree_path)
            lines.append(f"Path: {where} (the plan's own git worktree)")
            if plan.git_branch:
                base = f" (based on {plan.base_branch})" if plan.base_branch else ""
                lines.append(f"Git branch: {plan.git_branch}{base}")
        else:
            lines.append(f"Path: {where}")
            if rt.is_git:
                lines.append(f"Git branch: {gitops.current_branch(rt.project_dir) or '(detached)'}")
        try:
            names = sorted(p.name + ("/" if p.is_dir() else "") for p in where.iterdir()
                           if not p.name.startswith("."))
        except OSError:
            names = []
        if names:
            shown = names[:MAX_LISTED_FILES]
            more = f" (+{len(names) - len(shown)} more)" if len(names) > len(shown) else ""
            lines.append("Top-level: " + ", ".join(shown) + more)
        return "\n".join(lines)

    def _recent_messages(self, conversation_id: str, exclude_message_id: int | None) -> list[MessageRecord]:
        keep = max(0, self._rt.settings.context.recent_turns_kept) * 2
        if keep == 0:
            return []
        messages = self._rt.store.list_messages(conversation_id, limit=keep + 1)
        return [m for m in messages if m.id != exclude_message_id and m.content.strip()][-keep:]

    def recent_turns(self, conversation_id: str, exclude_message_id: int | None) -> str:
        """The conversation's last turns, oldest first."""
        return "\n\n".join(format_turn(m) for m in self._recent_messages(conversation_id, exclude_message_id))

    def retrieved(self, request: str, *, exclude_message_ids: set[int]) -> str:
        """The chunks of the project's messages that best match ``request``, each labelled with its source.

        Whole chunks only, best first, within ``[context] retrieved_tokens``.
        Messages in ``exclude_message_ids`` (the recent turns, the request itself) are left out, since
        the pack carries them already.
        """
        return self.retrieved_hits(request, exclude_message_ids=exclude_message_ids)[0]

    def retrieved_hits(self, request: str, *, exclude_message_ids: set[int],
                       skip: Callable[[ProjectHit], bool] | None = None) -> tuple[str, tuple[ProjectHit, ...]]:
        """:meth:`retrieved`'s text and the hits it holds; hits for which ``skip`` is true are left out.

        With ``skip`` (chunks a resumed session already has), more candidates are asked for, so the
        section still holds up to ``[memory] retrieved_chunks`` new ones.
        """
        limit = self._rt.settings.memory.retrieved_chunks
        budget = self._rt.settings.context.retrieved_tokens
        wanted = limit if skip is None else limit * 4
        hits = self._rt.memory.retrieve(request, exclude_message_ids=exclude_message_ids, limit=wanted)
        if skip is not None:
            hits = tuple(hit for hit in hits if not skip(hit))[:limit]
        counter = default_counter()
        parts: list[str] = []
        used_hits: list[ProjectHit] = []
        used = 0
        for hit in hits:  # whole chunks, best first, while they fit: a chunk cut in half helps nobody
            text = self.format_hit(hit)
            cost = counter.count(text) + 2
            if used + cost > budget:
                continue
            parts.append(text)
            used_hits.append(hit)
            used += cost
        return "\n\n".join(parts), tuple(used_hits)

    def compressed(self, conversation_id: str, before_id: int | None) -> str:
        """The topic summaries of messages older than ``before_id``, each with its range, oldest first.

        The newest summaries are kept whole within ``[context] memory_tokens``; older ones that do
        not fit are left out (counting stops there, so a very long conversation costs no more).
        """
        budget = self._rt.settings.context.memory_tokens
        counter = default_counter()
        parts: list[str] = []
        used = 0
        for summary in reversed(self._rt.store.list_summaries(conversation_id, newest=NEWEST_SUMMARIES)):
            if before_id is not None and summary.last_message_id >= before_id:
                continue
            text = (f"[messages {summary.first_message_id}–{summary.last_message_id}]\n"
                    f"{scrub_markers(summary.content).strip()}")
            cost = counter.count(text) + 2
            if used + cost > budget:
                break
            parts.append(text)
            used += cost
        return "\n\n".join(reversed(parts))

    @staticmethod
    def format_hit(hit: ProjectHit) -> str:
        """A retrieved chunk under a line naming its conversation, message, author and time."""
        message = hit.message
        who = "User" if message.role == "user" else ROLE_TITLES.get(message.persona or message.role,
                                                                  (message.persona or message.role).title())
        where = f"{hit.conversation_id}, message {message.id}, {who}, {message.created_at:%Y-%m-%d %H:%M}"
        return f"[{where}]\n{scrub_markers(hit.chunk_text).strip()}"

    def inheritance(self, conversation_id: str) -> str:
        """For a branch: the parent's last turns before the checkpoint, then the checkpoint message.

        When the parent holds fewer than :data:`INHERITED_TURNS` messages before the checkpoint and is
        itself a branch, the rest comes from its own parent (its checkpoint and the turns before it),
        so a branch of a branch still sees where the thread came from.
        """
        store = self._rt.store
        conversation = store.get_conversation(conversation_id)
        if conversation is None or conversation.branch_id is None:
            return ""
        branch = store.get_branch(conversation.branch_id)
        if branch is None or branch.checkpoint_id is None:
            return ""
        checkpoint = store.get_message(branch.checkpoint_id)
        earlier: list[MessageRecord] = []
        parent_conversation, before_id = branch.conversation_id, branch.checkpoint_id
        for _depth in range(100):  # a tree, but never trust a loop to a database row
            needed = INHERITED_TURNS - len(earlier)
            if needed <= 0:
                break
            earlier[:0] = store.list_messages(parent_conversation, before_id=before_id, limit=needed)
            if len(earlier) >= INHERITED_TURNS:
                break
            parent = store.get_conversation(parent_conversation)
            grand = store.get_branch(parent.branch_id) if parent is not None and parent.branch_id else None
            if grand is None or grand.checkpoint_id is None:
                break
            grand_checkpoint = store.get_message(grand.checkpoint_id)
            if grand_checkpoint is not None:
                earlier.insert(0, grand_checkpoint)
            parent_conversation, before_id = grand.conversation_id, grand.checkpoint_id
        parts = [format_turn(m) for m in earlier[-INHERITED_TURNS:]]
        if checkpoint is not None:
            parts.append("Checkpoint — " + format_turn(checkpoint))
        return "\n\n".join(parts)

    def links(self, conversation_id: str) -> str:
        """The sessions linked from this conversation (not the ones the user dropped), cited by their notes."""
        return "\n".join(f"- {cited_link(self._rt, link)}" for link in pack_links(self._rt, conversation_id))

    def build(
        self,
        *,
        role: str,
        conversation_id: str,
        request: str,
        plan: PlanRecord | None = None,
        findings: tuple[str, ...] = (),
        exclude_message_id: int | None = None,
        system: str | None = None,
        history: bool = True,
    ) -> ContextPack:
        """The ContextPack for ``role`` answering ``request`` in ``conversation_id``.

        ``system`` (the persona; by default the role's own) is counted against the budget; without
        ``history`` the pack holds no conversation, inheritance, links or retrieved chunks (a blind
        reviewer sees only the project and the plan). Only Architect and Developer packs retrieve.
        """
        return self.build_with_sources(role=role, conversation_id=conversation_id, request=request, plan=plan,
                                       findings=findings, exclude_message_id=exclude_message_id, system=system,
                                       history=history)[0]

    def build_with_sources(
        self,
        *,
        role: str,
        conversation_id: str,
        request: str,
        plan: PlanRecord | None = None,
        findings: tuple[str, ...] = (),
        exclude_message_id: int | None = None,
        system: str | None = None,
        history: bool = True,
    ) -> tuple[ContextPack, PackSources]:
        """:meth:`build`, with what the pack was built from (to remember what a session was sent)."""
        cfg = self._rt.settings.context
        retrieving = history and role in RETRIEVING_ROLES and cfg.retrieved_tokens > 0 \
            and self._rt.settings.memory.retrieved_chunks > 0
        if retrieving:
            # The request's embedding runs on a worker thread while the sections below are read.
            self._rt.memory.prepare_retrieval(request)
        if system is None:
            system = load_persona(role, self._rt.project_dir)
        specs = [
            SectionSpec("project", "Project", self.project_identity(plan, worktree=role in WORKTREE_ROLES), 2,
                        budget=cfg.project_tokens),
        ]
        if plan is not None:
            specs.append(SectionSpec("plan", f"Active plan ({plan.phase})",
                                     plan_brief(plan), 1, budget=cfg.plan_tokens))
        if role in PLANNING_ROLES:
            in_flight = in_flight_text(self._rt.store)
            if in_flight:
                specs.append(SectionSpec("plans", SECTION_TITLE, in_flight, 2, budget=cfg.plan_tokens))
        if findings:
            specs.append(SectionSpec("findings", "Review findings",
                                     "\n".join(f"- {f}" for f in findings), 1, budget=cfg.findings_tokens))
        if not history:
            return assemble(specs, cfg.max_tokens, request=request, system=system), PackSources()
        inherited = self.inheritance(conversation_id)
        if inherited:
            specs.append(SectionSpec("inheritance", "Thread inheritance (from the parent conversation)",
                                     inherited, 3, keep="tail", budget=cfg.inheritance_tokens))
        cited = pack_links(self._rt, conversation_id)
        links = "\n".join(f"- {cited_link(self._rt, link)}" for link in cited)
        if links:
            specs.append(SectionSpec("links", "Linked sessions", links, 5, budget=cfg.links_tokens))
        recent_messages = self._recent_messages(conversation_id, exclude_message_id)
        recent = "\n\n".join(format_turn(m) for m in recent_messages)
        if recent:
            specs.append(SectionSpec("recent", "Recent conversation",
                                     recent, 4, keep="tail", budget=cfg.recent_turns_tokens))
        oldest_recent = min((m.id for m in recent_messages), default=None)
        memory = self.compressed(conversation_id, oldest_recent)
        if memory:
            specs.append(SectionSpec("memory", "Compressed memory (earlier in this conversation)",
                                     memory, 5, keep="tail", budget=cfg.memory_tokens))
        hits: tuple[ProjectHit, ...] = ()
        if retrieving:
            excluded = {m.id for m in recent_messages}
            if exclude_message_id is not None:
                excluded.add(exclude_message_id)
            found, hits = self.retrieved_hits(request, exclude_message_ids=excluded)
            if found:
                specs.append(SectionSpec("retrieved", "Retrieved from the project's history",
                                         found, 6, budget=cfg.retrieved_tokens))
        pack = assemble(specs, cfg.max_tokens, request=request, system=system)
        return pack, PackSources(tuple(m.id for m in recent_messages), hits, cited)
