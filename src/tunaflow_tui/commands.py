"""The command palette (ctrl+p): every action under a plain, stable name.

The names are part of the interface: users and scripts rely on them, so they do not change.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from tunaflow_tui.controller.runtime_controller import RuntimeController

Command = tuple[str, str, Callable[["RuntimeController"], None]]

COMMANDS: tuple[Command, ...] = (
    ("Approve plan", "Approve the plan waiting for approval: development starts", lambda c: c.approve_plan()),
    ("Request plan revision", "Write feedback; the Architect proposes again", lambda c: c.request_revision()),
    ("Hold plan", "Decide later; the plan stays in the workflow view", lambda c: c.hold_plan()),
    ("Accept review", "Accept the review verdict: the plan is done", lambda c: c.accept_review()),
    ("Rework", "Send the review findings to the Developer", lambda c: c.rework()),
    ("Redesign", "Send the review findings back to the Architect", lambda c: c.redesign()),
    ("Retry review seat", "Run the reviewer seat that produced a review error again", lambda c: c.retry_seat()),
    ("Toggle branch pane", "Show or hide the branch pane (f6)", lambda c: c.toggle_pane()),
    ("Pin branch pane", "Pin the branch pane as a 50:50 split, or unpin it (f7)", lambda c: c.pin_pane()),
    ("Open workflow", "Plans, subtasks, timeline, documents and usage (f3)", lambda c: c.open_workflow()),
    ("Open plan documents", "The plan and task documents of the newest plan", lambda c: c.open_plan_documents()),
    ("Cancel agent", "Stop the running agent(s); the plan keeps its phase (f4)", lambda c: c.cancel_agent()),
    ("Open native CLI", "Continue this conversation in the engine's own CLI; come back when it exits",
     lambda c: c.open_native_cli()),
    ("Switch engine", "Pick another engine for the Architect; its next turn gets the context pack",
     lambda c: c.switch_engine()),
    ("Change theme", "Built-in tunaflow themes and your own theme files", lambda c: c.change_theme()),
    ("Show context pack", "Sections and token counts of what the Architect's next turn gets",
     lambda c: c.show_context_pack()),
    # through the app, like f2: it closes the workflow view and document viewer first
    ("Jump to decision", "Focus the newest decision waiting for you (f2)", lambda c: c.app.action_jump_decision()),
    ("Resume interrupted step", "Continue an agent step that a crash or cancel interrupted",
     lambda c: c.resume_interrupted("resume")),
    ("Retry interrupted step", "Run an interrupted agent step again from a fresh session",
     lambda c: c.resume_interrupted("retry")),
    ("Merge plan", "Merge a finished plan's branch into its base (never forced)", lambda c: c.merge_plan()),
    ("Remove plan worktree", "Remove a finished plan's worktree; its git branch stays",
     lambda c: c.remove_worktree()),
    ("Initialise git repository", "git init and a first commit, so each plan gets its own branch and worktree",
     lambda c: c.initialise_git()),
)
"""(name, help, action) of every palette command."""

COMMAND_NAMES: tuple[str, ...] = tuple(name for name, _, _ in COMMANDS)


class TunaflowCommands(Provider):
    """Plan, review, pane, agent and appearance commands."""

    def _controller(self) -> RuntimeController | None:
        # imported here: the palette must not pull the workflow runtime in before the first frame
        from tunaflow_tui.controller.opener import ProjectOpener

        controller = getattr(self.app, "controller", None)
        if isinstance(controller, ProjectOpener):
            controller = controller.inner
            if controller is None:
                return None
        from tunaflow_tui.controller.runtime_controller import RuntimeController

        return controller if isinstance(controller, RuntimeController) else None

    def _run(self, action: Callable[[RuntimeController], None]) -> None:
        controller = self._controller()
        if controller is None:
            opener = getattr(self.app, "controller", None)
            if getattr(opener, "is_open", True) is False:
                error = getattr(opener, "error", None)
                self.app.notify(error or "The project is still opening; try again in a moment.",
                                severity="warning")
                return
            self.app.notify("There is no project open in this session.", severity="warning")
            return
        action(controller)

    async def discover(self) -> Hits:
        for name, help_text, action in COMMANDS:
            yield DiscoveryHit(name, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, action in COMMANDS:
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(self._run, action), text=name, help=help_text)
