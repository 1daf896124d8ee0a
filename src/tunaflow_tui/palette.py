"""The command palette (ctrl+p): every action under a plain, stable name.

The names are part of the interface: users and scripts rely on them, so they do not change. A
command's help names the key that does the same, as the keymap has it now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tunaflow_tui.core.workflow.decision_words import Decision

if TYPE_CHECKING:
    from tunaflow_tui.controllers.session import ProjectSession

Action = Callable[["ProjectSession"], None]


@dataclass(frozen=True, slots=True)
class PaletteCommand:
    """One palette entry: its name, what it does, the action, and the binding that does the same."""

    name: str
    help: str
    action: Action
    key: tuple[str, str] | None = None
    """(owner "module:Class", binding id) of the key that does the same, named in the help."""


_APP = "tunaflow_tui.app:TunaflowApp"
_PANE = "tunaflow_tui.widgets.workspace:Workspace"
_BRANCH = "tunaflow_tui.widgets.branch_thread:BranchThread"
_ROUNDTABLE = "tunaflow_tui.widgets.roundtable.roundtable_thread:RoundtableThread"
_PLAN_CARD = "tunaflow_tui.widgets.decision.plan_card:PlanProposalCard"
_VERDICT_CARD = "tunaflow_tui.widgets.decision.verdict_card:ReviewVerdictCard"
_WAY_CARD = "tunaflow_tui.widgets.decision.way_card:WayCard"

COMMANDS: tuple[PaletteCommand, ...] = (
    PaletteCommand("Approve plan", "Approve the plan waiting for approval: development starts",
                   lambda s: s.decisions.decide_by_name(Decision.APPROVE), (_PLAN_CARD, "plan.approve")),
    PaletteCommand("Edit plan", "Edit the proposal waiting for approval (title, subtasks, description, outcome)",
                   lambda s: s.decisions.decide_by_name(Decision.EDIT),
                   (_PLAN_CARD, "plan.edit")),
    PaletteCommand("Request plan revision", "Write feedback; the Architect proposes again",
                   lambda s: s.decisions.decide_by_name(Decision.REVISE), (_PLAN_CARD, "plan.revise")),
    PaletteCommand("Hold plan", "Decide later; the plan stays in the workflow view",
                   lambda s: s.decisions.decide_by_name(Decision.HOLD), (_PLAN_CARD, "plan.hold")),
    PaletteCommand("Resume held plan", "Take a plan you held back to its question",
                   lambda s: s.decisions.decide_by_name(Decision.RESUME), (_WAY_CARD, "way.resume")),
    PaletteCommand("Start review", "Run the tests and the two reviewers on an implemented plan",
                   lambda s: s.decisions.decide_by_name(Decision.START_REVIEW),
                   (_WAY_CARD, "way.start_review")),
    PaletteCommand("Accept review", "Accept a complete, passing review: the plan is done",
                   lambda s: s.decisions.decide_by_name(Decision.ACCEPT), (_VERDICT_CARD, "review.accept")),
    PaletteCommand("Accept with an incomplete review",
                   "Accept a passing review a seat gave no verdict on (asks you to confirm)",
                   lambda s: s.decisions.decide_by_name(Decision.ACCEPT_PARTIAL)),
    PaletteCommand("Accept over a failed review", "Accept work the reviewers did not pass (asks you to confirm)",
                   lambda s: s.decisions.decide_by_name(Decision.ACCEPT_OVERRIDE)),
    PaletteCommand("Rework", "Send the review findings to the Developer",
                   lambda s: s.decisions.decide_by_name(Decision.REWORK), (_VERDICT_CARD, "review.rework")),
    PaletteCommand("Redesign", "Send the review findings back to the Architect",
                   lambda s: s.decisions.decide_by_name(Decision.REDESIGN), (_VERDICT_CARD, "review.redesign")),
    PaletteCommand("Retry review seat", "Run the reviewer seat that produced a review error again",
                   lambda s: s.decisions.decide_by_name(Decision.RETRY), (_VERDICT_CARD, "review.retry")),
    PaletteCommand("Developer continues", "A Developer that stopped (or failed review again and again) carries on",
                   lambda s: s.decisions.decide_by_name(Decision.CONTINUE), (_WAY_CARD, "way.continue")),
    PaletteCommand("Mark implementation complete", "Count a stopped Developer's work as complete and review it",
                   lambda s: s.decisions.decide_by_name(Decision.COMPLETE), (_WAY_CARD, "way.complete")),
    PaletteCommand("Retry worktree setup", "Run the failed worktree setup command again",
                   lambda s: s.decisions.decide_by_name(Decision.RETRY_SETUP), (_WAY_CARD, "way.retry_setup")),
    PaletteCommand("Skip worktree setup", "Start the Developer without the worktree setup",
                   lambda s: s.decisions.decide_by_name(Decision.SKIP_SETUP), (_WAY_CARD, "way.skip_setup")),
    PaletteCommand("Resolve merge conflict", "The Developer merges the base into the plan's branch and resolves the "
                   "conflicts; the tests and the review run again",
                   lambda s: s.decisions.decide_by_name(Decision.RESOLVE_CONFLICT),
                   ("tunaflow_tui.widgets.decision.conflict_card:ConflictCard", "conflict.resolve")),
    PaletteCommand("Leave merge conflict", "Keep a plan whose merge conflicted done and unmerged, its branch as reviewed",
                   lambda s: s.decisions.decide_by_name(Decision.LEAVE_CONFLICT),
                   ("tunaflow_tui.widgets.decision.conflict_card:ConflictCard", "conflict.leave")),
    PaletteCommand("Abandon plan", "End the newest waiting plan for good (asks you to confirm)",
                   lambda s: s.decisions.decide_by_name(Decision.ABANDON), (_PLAN_CARD, "plan.abandon")),
    PaletteCommand("Start roundtable",
                   "Several agents discuss one topic in rounds (the focused message is the topic)",
                   lambda s: s.roundtable.start()),
    PaletteCommand("Next round", "The roundtable in the pane runs one more round; your messages since are seen by all",
                   lambda s: s.roundtable.next_round(), (_ROUNDTABLE, "roundtable.next_round")),
    PaletteCommand("Stop roundtable", "Cancel the answering seats of the roundtable in the pane; no further seat starts",
                   lambda s: s.roundtable.stop(), (_ROUNDTABLE, "roundtable.stop")),
    PaletteCommand("Add seat", "Add a seat to the roundtable in the pane (between rounds): name, engine, role, blind",
                   lambda s: s.roundtable.seats.add_seat(), (_ROUNDTABLE, "roundtable.add_seat")),
    PaletteCommand("Remove seat", "Remove a seat from the roundtable in the pane (between rounds); its answers stay",
                   lambda s: s.roundtable.seats.remove_seat(), (_ROUNDTABLE, "roundtable.remove_seat")),
    PaletteCommand("Rank answers", "Every seat of the roundtable in the pane ranks the others' latest answers, "
                   "anonymously; the table joins the brief", lambda s: s.roundtable.rank()),
    PaletteCommand("Cancel seat", "Cancel one answering seat of the roundtable in the pane; the others go on",
                   lambda s: s.roundtable.seats.cancel_seat()),
    PaletteCommand("Re-run seat", "Run one seat of the roundtable in the pane again; only its answer is replaced",
                   lambda s: s.roundtable.seats.rerun_seat()),
    PaletteCommand("Toggle branch pane", "Show or hide the branch pane", lambda s: s.panes.toggle_pane(),
                   (_PANE, "pane.toggle")),
    PaletteCommand("Pin branch pane", "Pin the branch pane as a 50:50 split, or unpin it",
                   lambda s: s.panes.pin_pane(), (_PANE, "pane.pin")),
    PaletteCommand("Branch from message",
                   "Fork a branch at the selected message (else the last one) of the chat you are in",
                   lambda s: s.branches.branch_from_selection(),
                   ("tunaflow_tui.widgets.message_block:MessageBlock", "message.branch")),
    PaletteCommand("Next branch", "Show the next active branch in the branch pane",
                   lambda s: s.branches.cycle(), (_PANE, "pane.next")),
    PaletteCommand("Adopt branch", "Summarize the branch in the pane and insert the summary into its parent",
                   lambda s: s.branches.requested(None, "adopt"), (_BRANCH, "branch.adopt")),
    PaletteCommand("Rename branch", "Give the branch in the pane another label",
                   lambda s: s.branches.requested(None, "rename"), (_BRANCH, "branch.rename")),
    PaletteCommand("Archive branch", "Move the branch in the pane to the Archive (read-only, messages kept)",
                   lambda s: s.branches.requested(None, "archive"), (_BRANCH, "branch.archive")),
    PaletteCommand("Restore branch", "Make the archived or adopted branch in the pane active again",
                   lambda s: s.branches.requested(None, "restore"), (_BRANCH, "branch.restore")),
    PaletteCommand("Delete branch", "Delete the branch in the pane (asks first; an active one's messages go too)",
                   lambda s: s.branches.requested(None, "delete"), (_BRANCH, "branch.delete")),
    PaletteCommand("Open workflow", "Plans, subtasks, timeline, documents and usage",
                   lambda s: s.workers.run_ui(s.panes.open_workflow(), "open the workflow view"),
                   (_APP, "workflow.open")),
    PaletteCommand("Open plan documents", "The plan and task documents of the newest plan",
                   lambda s: s.workers.run_ui(s.panes.open_workflow(documents=True), "open the plan documents")),
    PaletteCommand("Cancel agent", "Stop the running agents; the plan keeps its phase",
                   lambda s: s.project.cancel_agent(), (_APP, "agent.cancel")),
    PaletteCommand("Open native CLI", "Continue this conversation in the engine's own CLI; come back when it exits",
                   lambda s: s.tools.open_native_cli()),
    PaletteCommand("End native CLI", "End the native CLI in the pane (asks first); the conversation records it",
                   lambda s: s.tools.end_native_cli()),
    PaletteCommand("Switch engine", "Pick another engine for the Architect, or for the branch in focus in the "
                   "pane; its next turn gets the context pack",
                   lambda s: s.switch_engine()),
    PaletteCommand("Change theme", "Built-in tunaflow themes and your own theme files",
                   lambda s: s.tools.change_theme()),
    PaletteCommand("Search", "Search every conversation and branch; open a hit where it was written",
                   lambda s: s.app.action_open_search(), (_APP, "search.open")),
    PaletteCommand("Show context pack", "Sections and token counts of what the Architect's next turn gets",
                   lambda s: s.tools.show_context_pack()),
    # through the app, like its key: it closes the workflow view and document viewer first
    PaletteCommand("Jump to decision", "Focus the next decision waiting for you (oldest first, across plans)",
                   lambda s: s.app.action_jump_decision(), (_APP, "decision.jump")),
    PaletteCommand("Resume interrupted step", "Continue an agent step that a crash or cancel interrupted",
                   lambda s: s.project.resume_interrupted("resume")),
    PaletteCommand("Retry interrupted step", "Run an interrupted agent step again from a fresh session",
                   lambda s: s.project.resume_interrupted("retry")),
    PaletteCommand("Stop leftover agents", "End agents a crashed tunaflow left running, so their steps can resume",
                   lambda s: s.project.stop_leftover_agents()),
    PaletteCommand("Merge plan", "Merge a finished plan's branch into its base (never forced)",
                   lambda s: s.outcomes.merge_plan()),
    PaletteCommand("Remove plan worktree", "Remove a finished plan's worktree; its git branch stays",
                   lambda s: s.outcomes.remove_worktree()),
    PaletteCommand("Unfold records", "Unfold every decision record in the chat to its details, or fold them again",
                   lambda s: s.app.chat_view.toggle_records(),
                   ("tunaflow_tui.widgets.message_block:MessageBlock", "message.record")),
    PaletteCommand("Initialise git repository",
                   "git init and a first commit, so each plan gets its own branch and worktree",
                   lambda s: s.project.initialise_git()),
)
"""Every palette command."""

COMMAND_NAMES: tuple[str, ...] = tuple(command.name for command in COMMANDS)


class TunaflowCommands(Provider):
    """Plan, review, pane, agent and appearance commands."""

    def _help(self, command: PaletteCommand) -> str:
        if command.key is None:
            return command.help
        from importlib import import_module

        from tunaflow_tui.keyhints import key_for

        where, binding_id = command.key
        module, _, name = where.partition(":")
        owner = getattr(import_module(module), name)
        key = key_for(self.app, owner, binding_id)
        return f"{command.help} ({key})" if key else command.help

    def _run(self, action: Action) -> None:
        session = getattr(getattr(self.app, "controller", None), "session", None)
        if session is None:
            opener = getattr(self.app, "controller", None)
            if getattr(opener, "is_open", True) is False:
                error = getattr(opener, "error", None)
                self.app.notify(error or "The project is still opening; try again in a moment.",
                                severity="warning")
                return
            self.app.notify("There is no project open in this session.", severity="warning")
            return
        action(session)

    async def discover(self) -> Hits:
        for command in COMMANDS:
            yield DiscoveryHit(command.name, partial(self._run, command.action), help=self._help(command))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in COMMANDS:
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(score, matcher.highlight(command.name), partial(self._run, command.action),
                          text=command.name, help=self._help(command))
