"""ProjectController: the project as a whole — git set-up, interrupted steps, cancelling agents.

On open it says what was left waiting (a step a crash interrupted, a decision, an agent a crash left
running) and, for a folder without git, offers to set git up once; a git repository without a commit
is offered its first one.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tunaflow_tui.controllers.git_offer import (
    INIT_GIT_COMMAND,
    NO_COMMIT_NOTE,
    NOT_GIT_NOTE,
    git_declined,
    initialise_repository,
    remember_git_declined,
)
from tunaflow_tui.controllers.trust_offer import untrusted_note, wants_trust_prompt
from tunaflow_tui.core.counting import counted
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.keyhints import app_key
from tunaflow_tui.runtime.leftovers import describe
from tunaflow_tui.screens.git_init import git_init_screen, initial_commit_screen
from tunaflow_tui.screens.trust_screen import trust_screen

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.status_controller import StatusController
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.runtime.leftovers import Leftover
    from tunaflow_tui.runtime.recovery import InterruptedRun
    from tunaflow_tui.runtime.runtime import WorkflowRuntime


@dataclass(frozen=True, slots=True)
class _OpeningFacts:
    """What the project's opening has to say, gathered off the event loop."""

    interrupted: tuple[InterruptedRun, ...]
    decisions_waiting: bool
    leftovers: tuple[Leftover, ...]
    offer_git: bool
    offer_initial_commit: bool
    queued: tuple[int, ...] = ()


class ProjectController:
    """Project-wide actions and what the app says when the project opens.

    Args:
        app: The app.
        runtime: The project's runtime.
        workers: Where agent work runs.
        status: The status line (the not-a-git-repository note goes once git is set up).
        offer_git_init: Ask whether to initialise a git repository when the project has none.
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, workers: Workers, status: StatusController,
                 *, offer_git_init: bool = True) -> None:
        self._app = app
        self._runtime = runtime
        self._workers = workers
        self._status = status
        self._offer_git_init = offer_git_init

    async def greet(self) -> None:
        """What the user should know as the project opens: an interrupted step, a waiting decision, no git.

        What it takes to know (the database, git, the leftover agents' process groups in ``/proc``)
        is read in a thread: the screen stays live meanwhile.
        """
        facts = await asyncio.to_thread(self._opening_facts)
        app = self._app
        palette = app_key(app, "app.palette", "ctrl+p")
        if facts.queued:  # approved before, waiting for a slot: they keep their place and start by themselves
            for plan_id in facts.queued:
                self._workers.run_agent(self._runtime.start_queued(plan_id), f"start queued plan {plan_id}",
                                        plan_id=plan_id)
            app.notify(f"{counted(len(facts.queued), 'queued plan')} will start in approval order as slots free "
                       f"(max_parallel_plans = {self._runtime.settings.workflow.max_parallel_plans}).", timeout=8)
        if facts.interrupted:
            run = facts.interrupted[0]
            app.notify(
                f"Plan “{neutralize(run.plan_title)}”: the {run.role or 'agent'} step was interrupted. "
                f"Press {palette} and choose “Resume interrupted step” (or “Retry interrupted step”).",
                severity="warning", timeout=20,
            )
        elif facts.decisions_waiting:
            jump = app_key(app, "decision.jump", "f2")
            app.notify(f"A decision is waiting for you ({jump} jumps to it).", timeout=8)
        if facts.leftovers:  # an agent a crashed tunaflow left running: resuming waits for it, or it is stopped
            app.notify(neutralize(describe(facts.leftovers)), severity="warning", timeout=30)
        if wants_trust_prompt(self._runtime.settings):
            decided = self._runtime.settings.project_trust
            assert decided is not None
            app.push_screen(trust_screen(neutralize(self._runtime.project_dir.name),
                                         [neutralize(line) for line in decided.lines]), self._trust_answered)
        if facts.offer_git:
            app.push_screen(git_init_screen(neutralize(self._runtime.project_dir.name)), self._git_answered)
        elif facts.offer_initial_commit:
            app.push_screen(initial_commit_screen(neutralize(self._runtime.project_dir.name)),
                            self._initial_commit_answered)

    def _opening_facts(self) -> _OpeningFacts:
        """What :meth:`greet` says, read from the database, git and ``/proc`` (in a thread)."""
        runtime = self._runtime
        offer_git = self._offer_git_init and not runtime.is_git and not git_declined(runtime.project_dir)
        return _OpeningFacts(
            interrupted=runtime.interrupted_plans(),
            queued=runtime.queued_to_start(),
            decisions_waiting=bool(runtime.waiting()),
            leftovers=runtime.leftover_agents(),
            offer_git=offer_git,
            offer_initial_commit=not offer_git and self._offer_git_init and runtime.needs_initial_commit,
        )

    # ------------------------------------------------------------------ the project's own commands
    def _trust_answered(self, choice: str | None) -> None:
        from tunaflow_tui.core.settings import load_settings
        from tunaflow_tui.core.settings.trust import TrustStore

        runtime = self._runtime
        decided = runtime.settings.project_trust
        if decided is None or choice not in ("trust", "never"):
            self._app.notify("The project's own commands are not used for now; you are asked again next time.",
                             severity="warning", timeout=10)
            return
        note = untrusted_note(runtime.settings)
        try:
            if choice == "never":
                TrustStore().deny(runtime.project_dir, decided.commands)
                self._app.notify("Never: the project's own commands are not used, and not asked about again "
                                 "until they change.", timeout=10)
                return
            TrustStore().trust(runtime.project_dir, decided.commands)
            runtime.replace_settings(load_settings(runtime.project_dir))
        except Exception as exc:  # shown; the project goes on without its commands
            self._app.notify(f"Could not record the decision: {neutralize(str(exc)) or type(exc).__name__}",
                             severity="error", timeout=12)
            return
        self._status.drop_note(note)
        self._app.notify("Trusted: the project's own commands are used from the next turn on.", timeout=10)

    # ------------------------------------------------------------------ a repository without a commit
    def _initial_commit_answered(self, choice: str | None) -> None:
        if choice != "commit":
            self._app.notify(NO_COMMIT_NOTE, severity="warning", timeout=12)
            return
        self._workers.run_ui(self._create_initial_commit(), "create the initial commit")

    async def _create_initial_commit(self) -> None:
        try:
            sha = await asyncio.to_thread(self._runtime.create_initial_commit)
        except Exception as exc:  # shown; the repository stays as it was
            self._app.notify(f"Could not create the initial commit: {neutralize(str(exc)) or type(exc).__name__}",
                             severity="error", timeout=12)
            return
        self._app.notify(f"Created the initial commit {sha[:10]}: plans can now branch from it.", timeout=10)

    # ------------------------------------------------------------------ a project without git
    def _git_answered(self, choice: str | None) -> None:
        if choice != "init":
            remember_git_declined(self._runtime.project_dir)
            palette = app_key(self._app, "app.palette", "ctrl+p")
            self._app.notify(f"{NOT_GIT_NOTE} Not asked again: {palette} “{INIT_GIT_COMMAND}” sets git up later.",
                             severity="warning", timeout=12)
            return
        self._workers.run_ui(self._initialise_git(), "initialise git")

    def initialise_git(self) -> None:
        """Set up git for a project without it (the palette's command; asked on open until declined)."""
        if self._runtime.is_git:
            self._app.notify("The project is already a git repository.")
            return
        self._workers.run_ui(self._initialise_git(), "initialise git")

    async def _initialise_git(self) -> None:
        project = self._runtime.project_dir
        try:
            await asyncio.to_thread(initialise_repository, project)
        except Exception as exc:  # shown; the project stays as it was
            self._app.notify(f"Could not initialise git: {neutralize(str(exc)) or type(exc).__name__}",
                             severity="error", timeout=12)
            return
        finally:
            self._runtime.refresh_git()
        self._status.drop_note(NOT_GIT_NOTE)
        self._app.notify("Initialised a git repository and committed the current files: each plan now "
                         "gets its own branch and worktree, merged when you accept it.", timeout=10)

    # ------------------------------------------------------------------ agents
    def cancel_agent(self) -> None:
        """Stop every running agent; their messages are kept as interrupted."""

        async def work() -> None:
            count = await self._runtime.cancel()
            if count:
                self._app.notify(f"Cancelled {count} running agent{'s' if count != 1 else ''}; "
                                 "what it wrote so far is kept.")
            else:
                self._app.notify("No agent is running.")

        self._workers.run_ui(work(), "cancel the agents")

    def stop_leftover_agents(self) -> None:
        """End the agents (and test runs) a crashed tunaflow left running; they block resuming their steps."""

        async def work() -> None:
            if not self._runtime.leftover_agents():
                self._app.notify("No agent from an earlier tunaflow is running.")
                return
            stopped = await self._runtime.stop_leftover_agents()
            left = self._runtime.leftover_agents()
            if stopped:
                names = ", ".join(neutralize(leftover.what) for leftover in stopped)
                self._app.notify(f"Stopped {names}. “Resume interrupted step” continues the work.", timeout=10)
            if left:
                self._app.notify(neutralize(describe(left)), severity="warning", timeout=20)

        self._workers.run_agent(work(), "stop the leftover agents")

    def resume_interrupted(self, how: str = "resume") -> None:
        """Run the interrupted agent step again (``resume`` keeps the session, ``retry`` starts fresh)."""
        runs = self._runtime.interrupted_plans()
        if not runs:
            self._app.notify("No plan has an interrupted step.")
            return
        run = runs[0]
        self._app.notify(f"{'Resuming' if how == 'resume' else 'Retrying'} the {run.role or 'agent'} step "
                         f"of “{neutralize(run.plan_title)}”.")
        self._workers.run_agent(self._runtime.resume_interrupted(run.plan_id, how=how),
                                f"{how} the interrupted step", plan_id=run.plan_id)
