"""What the command palette and a few keys do: gate decisions by name, panes, engines, themes, git."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from textual.app import SuspendNotSupported

from tunaflow_tui.agents.handover import HandoverUnsupportedError, native_cli_argv
from tunaflow_tui.controller import plan_views
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.screens.pickers import ContextPackScreen, PickerScreen
from tunaflow_tui.views.plans import APPROVED, HELD
from tunaflow_tui.widgets.done_card import DoneCard
from tunaflow_tui.widgets.plan_card import PlanProposalCard
from tunaflow_tui.widgets.verdict_card import ReviewVerdictCard

if TYPE_CHECKING:
    from tunaflow_tui.app import TunaflowApp
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

CLI_TYPES = ("claude", "codex", "gemini")


class PaletteActions:
    """Mixed into the runtime controller: one method per palette command."""

    runtime: WorkflowRuntime
    store: Store

    if TYPE_CHECKING:
        @property
        def app(self) -> TunaflowApp: ...

        def run_agent(self, work: Coroutine[Any, Any, object], what: str) -> None: ...

        async def _show_done(self, plan: Any, *, focus: bool) -> DoneCard: ...

        def _refresh_status(self) -> None: ...

    def run_ui(self, work: Coroutine[Any, Any, object]) -> None:
        """Run a short piece of UI work (mounting a card, opening a modal) without blocking the palette."""
        self.app.run_worker(work, group="ui", exit_on_error=False)

    # ------------------------------------------------------------------ gate decisions by name
    async def _pending_card(self, kinds: tuple[str, ...], *, held_too: bool = False) -> Any:
        plans = [p for p in self.store.list_plans() if p.pending_decision in kinds
                 and (held_too or p.phase != "held")]
        if not plans:
            what = "plan waiting for approval" if "approval" in kinds else "review waiting for your decision"
            self.app.notify(f"There is no {what}.", severity="warning")
            return None
        plan = max(plans, key=lambda p: (p.phase != "held", p.updated_at, p.id))
        dock = self.app.decision_dock
        if plan.pending_decision == "approval":
            card: Any = await dock.show_proposal(plan_views.proposal_view(plan))
        else:
            card = await dock.show_verdict(plan_views.verdict_view(plan))
        card.arm()  # chosen in the palette: the user means this card
        card.focus()
        return card

    def _on_proposal(self, act: str) -> None:
        async def work() -> None:
            card = await self._pending_card(("approval",), held_too=True)
            if not isinstance(card, PlanProposalCard):
                return
            if act == "revise":
                card.action_request_revision()
            elif act == HELD and card.view.decision == HELD:
                self.app.notify("That plan is already on hold.")
            else:
                card.action_decide(act)

        self.run_ui(work())

    def _on_verdict(self, act: str) -> None:
        async def work() -> None:
            card = await self._pending_card(("review", "review_error"))
            if not isinstance(card, ReviewVerdictCard):
                return
            if act == "retry":
                if not card.view.has_errored_seat:
                    self.app.notify("No reviewer seat failed; there is nothing to retry.", severity="warning")
                    return
                card.action_retry()
            else:
                card.action_decide(act)

        self.run_ui(work())

    def approve_plan(self) -> None:
        """Approve the newest pending proposal."""
        self._on_proposal(APPROVED)

    def request_revision(self) -> None:
        """Ask the Architect to revise the newest pending proposal (opens the feedback editor)."""
        self._on_proposal("revise")

    def hold_plan(self) -> None:
        """Put the newest pending proposal on hold."""
        self._on_proposal(HELD)

    def accept_review(self) -> None:
        """Accept the newest review verdict: the plan is done."""
        self._on_verdict("accept")

    def rework(self) -> None:
        """Send the newest verdict's findings to the Developer."""
        self._on_verdict("rework")

    def redesign(self) -> None:
        """Send the newest verdict's findings back to the Architect."""
        self._on_verdict("redesign")

    def retry_seat(self) -> None:
        """Run the reviewer seat that produced a review error again."""
        self._on_verdict("retry")

    # ------------------------------------------------------------------ panes and views
    def toggle_pane(self) -> None:
        """Show or hide the branch pane."""
        self.app.workspace.action_toggle_pane()

    def pin_pane(self) -> None:
        """Pin the branch pane 50:50, or unpin it."""
        self.app.workspace.action_pin_pane()

    def open_plan_documents(self) -> None:
        """The workflow view with the newest plan's documents focused."""
        self.open_workflow(documents=True)  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ agents
    def cancel_agent(self) -> None:
        """Stop every running agent; their messages are kept as interrupted."""

        async def work() -> None:
            count = await self.runtime.cancel()
            if count:
                self.app.notify(f"Cancelled {count} running agent{'s' if count != 1 else ''}; "
                                "what it wrote so far is kept.")
            else:
                self.app.notify("No agent is running.")

        self.app.run_worker(work(), group="cancel", exit_on_error=False)

    def resume_interrupted(self, how: str = "resume") -> None:
        """Run the interrupted agent step again (``resume`` keeps the session, ``retry`` starts fresh)."""
        runs = self.runtime.interrupted_plans()
        if not runs:
            self.app.notify("No plan has an interrupted step.")
            return
        run = runs[0]
        self.app.notify(f"{'Resuming' if how == 'resume' else 'Retrying'} the {run.role or 'agent'} step "
                        f"of “{neutralize(run.plan_title)}”.")
        self.run_agent(self.runtime.resume_interrupted(run.plan_id, how=how), f"{how} the interrupted step")

    def _conversation_in_focus(self) -> str:
        workspace = self.app.workspace
        branch = getattr(self, "_branch_cid", None)
        if branch and workspace.mode != "hidden" and workspace.pane.has_focus_within:
            return str(branch)
        return self.app.conversation_id

    def open_native_cli(self) -> None:
        """Hand the terminal to the engine's own CLI on this conversation's session; come back on exit."""
        cid = self._conversation_in_focus()
        conversation = self.store.get_conversation(cid)
        if conversation is None or not conversation.native_session_id or not conversation.native_engine:
            self.app.notify("This conversation has no native session yet: send a message first.",
                            severity="warning")
            return
        config = self.runtime.settings.engines.get(conversation.native_engine)
        if config is None:
            self.app.notify(f"The engine {conversation.native_engine!r} is no longer configured.", severity="warning")
            return
        try:
            argv = native_cli_argv(config.effective_type, config, conversation.native_session_id,
                                   self.runtime.project_dir)
        except (HandoverUnsupportedError, ValueError) as exc:
            self.app.notify(str(exc), severity="warning", timeout=8)
            return
        try:
            with self.app.suspend():
                subprocess.run(argv, cwd=self.runtime.project_dir, check=False)
        except SuspendNotSupported:
            self.app.notify("This terminal cannot be handed over to another program.", severity="warning")
        except OSError as exc:
            self.app.notify(f"Could not start {argv[0]}: {exc.strerror or exc}", severity="error")

    def switch_engine(self) -> None:
        """Pick another configured engine for the Architect; its next turn gets the ContextPack."""
        settings = self.runtime.settings
        current = settings.roles.architect
        choices = []
        for name, config in sorted(settings.engines.items()):
            kind = config.effective_type
            note = ""
            if kind in CLI_TYPES and shutil.which(config.command or kind) is None:
                note = "  (not installed)"
            choices.append((name, f"{name} · {kind}{note}{'  ← now' if name == current else ''}"))

        def chosen(name: str | None) -> None:
            if not name or name == current:
                return
            roles = settings.roles.model_copy(update={"architect": name})
            self.runtime.settings = settings.model_copy(update={"roles": roles})
            self.app.composer.recipient = f"Architect ({name})"
            self.app.notify(f"The Architect now runs on {name}. Its next turn gets the context pack.")

        self.app.push_screen(PickerScreen("Switch engine", "Which engine plays the Architect from the next turn?",
                                          choices, current), chosen)

    def change_theme(self) -> None:
        """Pick a theme (built-in or from the user's themes folder)."""
        names = sorted(self.app.available_themes)
        first = [n for n in ("tunaflow-dark", "tunaflow-light") if n in names]
        ordered = first + [n for n in names if n not in first]

        def chosen(name: str | None) -> None:
            if name:
                self.app.theme = name

        self.app.push_screen(PickerScreen("Change theme", "Themes from the themes folder are listed too.",
                                          [(n, n) for n in ordered], self.app.theme), chosen)

    def show_context_pack(self) -> None:
        """What the Architect's next turn would receive: each section and its tokens."""
        from tunaflow_tui.runtime import planning

        plan = planning.plan_in_drafting(self.runtime) or planning.active_plan(self.runtime)
        pack = self.runtime.context.build(role="architect", conversation_id="main", request="", plan=plan)
        conversation = self.store.get_conversation("main")
        resumes = bool(conversation and conversation.native_session_id
                       and conversation.native_engine == self.runtime.settings.roles.architect)
        intro = ("The Architect's next turn resumes its native session, so it gets only your message; "
                 "this is the pack it would get on a fresh session or another engine."
                 if resumes else "The Architect's next turn gets this pack before your message.")
        self.app.push_screen(ContextPackScreen(intro, pack.describe(), pack.total_tokens, pack.budget))

    # ------------------------------------------------------------------ after Done
    def _done_plan(self, plan_id: int | None, need: str) -> Any:
        if plan_id is not None:
            return self.store.get_plan(plan_id)
        done = [p for p in self.store.list_plans() if p.phase == "done"
                and (p.git_branch if need == "branch" else p.worktree_path)]
        if not done:
            self.app.notify("No finished plan has a branch to merge." if need == "branch"
                            else "No finished plan has a worktree left.", severity="warning")
            return None
        return done[-1]

    def merge_plan(self, plan_id: int | None = None) -> None:
        """Merge a done plan's branch into its base (fast-forward or merge commit; never force)."""
        plan = self._done_plan(plan_id, "branch")
        if plan is None:
            return

        async def work() -> None:
            await asyncio.sleep(0)
            try:
                result = self.runtime.merge(plan.id)
            except Exception as exc:
                self.app.notify(f"Merge refused: {neutralize(str(exc))}", severity="error", timeout=12)
                return
            if str(result.kind) == "conflict":
                files = ", ".join(result.conflicted_files[:5]) + (" …" if len(result.conflicted_files) > 5 else "")
                self.app.notify(f"Not merged: {neutralize(result.message)}: {neutralize(files)}. Nothing was changed; "
                                f"merge {plan.git_branch} yourself, or rework the plan.", severity="error", timeout=20)
                return
            self.app.notify(f"Merged: {neutralize(result.message)}.", timeout=10)
            card = self.app.decision_dock.card_for(plan.id)
            fresh = self.store.get_plan(plan.id)
            if isinstance(card, DoneCard) and fresh is not None:
                from dataclasses import replace

                has_tree = bool(fresh.worktree_path) and _exists(fresh.worktree_path)
                card.update_view(replace(card.view, merged=str(result.kind), has_worktree=has_tree))
                self.app.decision_dock.refresh_hint()

        self.run_ui(work())

    def remove_worktree(self, plan_id: int | None = None) -> None:
        """Remove a done plan's worktree (its git branch stays)."""
        plan = self._done_plan(plan_id, "worktree")
        if plan is None:
            return
        try:
            self.runtime.remove_worktree(plan.id)
        except Exception as exc:
            self.app.notify(f"Could not remove the worktree: {neutralize(str(exc))}", severity="error")
            return
        self.app.notify(f"Removed the worktree of “{neutralize(plan.title)}”; {plan.git_branch} stays.")
        card = self.app.decision_dock.card_for(plan.id)
        if isinstance(card, DoneCard):
            from dataclasses import replace

            card.update_view(replace(card.view, has_worktree=False))
            self.app.decision_dock.refresh_hint()


def _exists(path: str) -> bool:
    from pathlib import Path

    return Path(path).exists()
