"""ToolsController: engines, the native CLI hand-over, themes and the context pack.

Building a context pack reads the database and git: it runs in a thread.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.app import SuspendNotSupported

from tunaflow_tui.screens.pickers import ContextPackScreen, PickerScreen
from tunaflow_tui.viewmodels.context_pack import LinkChoice, PackView, pack_view

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.native_cli import NativeCliController
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

CLI_TYPES = ("claude", "codex", "gemini")


class ToolsController:
    """Engine choice, the native CLI, themes and the context pack.

    Args:
        app: The app.
        runtime: The project's runtime.
        workers: Where slow work runs.
        conversation_in_focus: The conversation the user is in (main, or the branch in the pane).
        native: Opens native CLIs in a terminal pane (without it, the terminal is handed over).
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, workers: Workers,
                 conversation_in_focus: Callable[[], str], native: NativeCliController | None = None) -> None:
        self._app = app
        self._native = native
        self._runtime = runtime
        self._workers = workers
        self._conversation_in_focus = conversation_in_focus

    def open_native_cli(self) -> None:
        """The engine's own CLI on this conversation's session: in a terminal pane, or (the fallback)
        with the whole terminal handed over until it exits."""
        runtime = self._runtime
        cid = self._conversation_in_focus()
        if self._native is not None and self._native.in_pane():
            self._native.open(cid)
            return
        from tunaflow_tui.runtime.native_sessions import NativeSessionUnavailable, native_launch

        try:  # the folder the session ran in: a branch's worktree, else the project
            launch = native_launch(runtime, cid)
        except NativeSessionUnavailable as exc:
            self._app.notify(str(exc), severity="warning", timeout=8)
            return
        argv = list(launch.argv)
        try:
            with self._app.suspend():
                subprocess.run(argv, cwd=launch.cwd, check=False)
        except SuspendNotSupported:
            self._app.notify("This terminal cannot be handed over to another program.", severity="warning")
        except OSError as exc:
            self._app.notify(f"Could not start {argv[0]}: {exc.strerror or exc}", severity="error")

    def end_native_cli(self) -> None:
        """End the native CLI in the pane (asks first); the conversation records its end."""
        if self._native is None:
            self._app.notify("No native CLI is running here.", severity="warning")
            return
        self._native.end(self._conversation_in_focus())

    def switch_engine(self) -> None:
        """Pick another configured engine for the Architect; its next turn gets the ContextPack."""
        runtime = self._runtime
        settings = runtime.settings
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
            runtime.settings = settings.model_copy(update={"roles": roles})
            self._app.composer.recipient = f"Architect ({name})"
            self._app.notify(f"The Architect now runs on {name}. Its next turn gets the context pack.")

        self._app.push_screen(PickerScreen("Switch engine", "Which engine plays the Architect from the next turn?",
                                           choices, current), chosen)

    def change_theme(self) -> None:
        """Pick a theme (built-in or from the user's themes folder); the choice is saved for next time."""
        self._app.action_change_theme()

    def _packs(self) -> list[PackView]:
        from tunaflow_tui.core.personas import load_persona
        from tunaflow_tui.runtime import planning, since

        runtime = self._runtime
        plan = planning.plan_in_drafting(runtime) or planning.active_plan(runtime)
        persona = load_persona("architect", runtime.project_dir)
        engine_name = runtime.engine_for("architect")[0].name
        resume = since.session_to_resume(runtime, "main", engine_name)
        turn = since.prepare_turn(runtime, "architect", "main", "", engine=engine_name, resume=resume, plan=plan,
                                  system=persona)
        intro = ("The Architect's next turn resumes its native session: it gets what it has not seen yet, "
                 "then your message." if turn.resumed
                 else "The Architect's next turn starts a session with this pack, then your message.")
        packs = [pack_view("next turn", intro, turn.pack, persona, None, links=self._link_choices("main"),
                           prompt=turn.prompt)]
        sent = runtime.last_sent
        if sent is not None:
            where = "the main conversation" if sent.conversation_id == "main" else sent.conversation_id
            how = "a resumed session: what it had not seen" if sent.resumed else "a new session: the full pack"
            packs.append(pack_view("last turn sent", f"What the {sent.role.title()} got in {where} ({how}), "
                                   "as it was sent.", sent.pack, load_persona(sent.role, runtime.project_dir), None,
                                   conversation_id=sent.conversation_id,
                                   links=self._link_choices(sent.conversation_id),
                                   prompt=sent.prompt or sent.pack.render()))
        return packs

    def _link_choices(self, conversation_id: str) -> tuple[LinkChoice, ...]:
        from tunaflow_tui.runtime.links import cited_link, pack_links

        runtime = self._runtime
        return tuple(LinkChoice(link.id, cited_link(runtime, link)) for link in pack_links(runtime, conversation_id))

    def show_context_pack(self) -> None:
        """What the Architect's next turn would receive, and what the last turn got: sections, tokens, text."""
        self._workers.run_ui(self._show_context_pack(), "build the context pack")

    async def _show_context_pack(self) -> None:
        packs = await asyncio.to_thread(self._packs)
        await self._app.push_screen(ContextPackScreen(packs, drop_link=self._drop_link))

    async def _drop_link(self, link_id: int) -> tuple[str, list[PackView]]:
        """Drop a link from its conversation's next packs; what to tell the user, and the packs rebuilt."""
        from tunaflow_tui.runtime.links import drop_link

        def drop() -> tuple[str, list[PackView]]:
            dropped = drop_link(self._runtime, link_id)
            if dropped is None:
                return "That link was already gone.", self._packs()
            where = "main" if dropped.from_conversation_id == "main" else dropped.from_conversation_id
            return (f"Dropped the link to {dropped.to_conversation_id}: the next turns in {where} go without it, "
                    "and it is not linked again."), self._packs()

        return await asyncio.to_thread(drop)
