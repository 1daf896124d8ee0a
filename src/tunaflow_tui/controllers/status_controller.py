"""StatusController: the lines above the composer, and the runtime's notices as toasts.

While agents work there is one line per running agent — each review seat on its own — and one for
the project's test run, each with how long it has been running ("⟳ reviewer (claude) is working… 12s"); with
more than one plan in flight a plan's line says which plan ("⟳ plan 2: developer (claude) is working… 12s").
Before the first agent starts the line says what the runtime does now; otherwise it keeps the
project's notes ("demo engine plays every role", "not a git repository"). What stops leaves at once:
a hint such as "f6 shows it live" lives on its agent's line, never in a toast that outlives it.
While the project's messages are being embedded (a project opened for the first time, or after an
upgrade) a last line shows how far that is; without the embedding model the user is told once that
search and retrieval use full text only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.turns import Usage
from tunaflow_tui.runtime.events import (
    MemoryProgress,
    MessageFinished,
    MessageStarted,
    NoticeRaised,
    Progress,
    ProjectTestsRunning,
    UsageReported,
)
from tunaflow_tui.runtime.memory import unavailable_notice

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.timer import Timer

    from tunaflow_tui.controllers.app_port import AppPort

SEVERITY: dict[str, SeverityLevel] = {"info": "information", "warning": "warning", "error": "error"}

MEMORY_OFF_SETTING = "semantic search is turned off"
"""The runtime's reason when the user turned embeddings off: nothing to tell them."""

HINT_MARK = "try: "
"""A note holding this suggests a first message (the demo's): it stays only until the first send."""

now: Callable[[], float] = time.monotonic
"""The clock elapsed times are read from (tests move it by hand)."""


@dataclass(frozen=True, slots=True)
class Running:
    """Something at work now: an agent's reply or the project's tests."""

    text: str
    started: float
    conversation_id: str | None = None
    meter: str = ""
    """What the agent reported using so far (``context 126/258,400 · $0.0123``), if anything."""


def usage_meter(usage: Usage) -> str:
    """``context 1,204/258,400 (0%) · 900 in · 120 out · $0.0123``: what an agent reported using so far."""
    parts: list[str] = []
    if usage.context_size > 0:
        share = usage.context_used * 100 // usage.context_size
        parts.append(f"context {usage.context_used:,}/{usage.context_size:,} ({share}%)")
    if usage.input_tokens or usage.output_tokens:
        parts.append(f"{usage.input_tokens:,} in · {usage.output_tokens:,} out")
    if usage.cost_usd is not None:
        parts.append(f"${usage.cost_usd:.4f}")
    return " · ".join(parts)


def elapsed(seconds: float) -> str:
    """``7s``, ``2m 05s``, ``1h 02m``: how long something has been running."""
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


class StatusController:
    """Keeps the status lines current and shows the runtime's notices.

    Args:
        app: The app.
        notes: Lines shown when no agent works.
        agents_running: Whether agent work runs now.
        live_hint: For a conversation, how to watch it live when it is out of sight ("f6 shows it
            live"), or "".
        plan_to_name: For a conversation (or a plan's test run), the plan its line names; None when
            the line needs no name (a single plan in flight, or no plan's conversation).
    """

    def __init__(self, app: AppPort, notes: tuple[str, ...], agents_running: Callable[[], bool],
                 live_hint: Callable[[str], str] | None = None,
                 plan_to_name: Callable[[str | None, int | None], int | None] | None = None) -> None:
        self._app = app
        self._plan_to_name = plan_to_name or (lambda _cid, _plan: None)
        self.notes = tuple(notes)
        self._agents_running = agents_running
        self._live_hint = live_hint or (lambda _cid: "")
        self._progress = ""
        self._running: dict[object, Running] = {}
        self._ticker: Timer | None = None
        self._memory = ""
        self._said: set[str] = set()  # notices already shown, that must not come twice

    def drop_note(self, note: str) -> None:
        """Stop showing ``note`` (what it said is no longer true)."""
        self.notes = tuple(n for n in self.notes if n != note)
        self.refresh()

    def sent(self) -> None:
        """The user sent a message: a note suggesting what to write (``try: …``) has done its work,
        and its line goes back to the chat (at 24 rows every line counts)."""
        kept = tuple(n for n in self.notes if HINT_MARK not in n)
        if kept != self.notes:
            self.notes = kept
            self.refresh()

    def progress(self, event: Progress) -> None:
        """The runtime says what it does now."""
        self._progress = neutralize(event.text)
        self.refresh()

    def agent_started(self, event: MessageStarted) -> None:
        """An agent began a reply: a line of its own, with its elapsed time."""
        who = self._named(f"{neutralize(event.role)} ({neutralize(event.engine)})", event.conversation_id, None)
        self._running[("message", event.message_id)] = Running(f"{who} is working…", now(), event.conversation_id)
        self.refresh()

    def _named(self, text: str, conversation_id: str | None, plan_id: int | None) -> str:
        """``text``, led by the plan it is about when several plans are in flight (``plan 2: …``)."""
        named = self._plan_to_name(conversation_id, plan_id)
        return text if named is None else f"plan {named}: {text}"

    def usage(self, event: UsageReported) -> None:
        """An agent reported its usage (an ACP agent as it works): its line shows the meter."""
        key = ("message", event.message_id)
        item = self._running.get(key)
        if item is not None:
            self._running[key] = replace(item, meter=usage_meter(event.usage))
            self.refresh()

    def agent_finished(self, event: MessageFinished) -> None:
        """An agent's reply ended (done, cancelled, failed): its line goes."""
        if self._running.pop(("message", event.message_id), None) is not None:
            self.refresh()

    def tests_running(self, event: ProjectTestsRunning) -> None:
        """The project's tests started or ended: a line of their own while they run."""
        key = ("tests", event.plan_id)
        if event.running:
            self._running[key] = Running(self._named(f"tests: {neutralize(event.command)}", None, event.plan_id), now())
        else:
            self._running.pop(key, None)
        self.refresh()

    def notice(self, event: NoticeRaised) -> None:
        """A notice from the runtime: a toast, as plain text (one already said is not repeated)."""
        text = neutralize(event.text)
        if text in self._said:
            return
        self._app.notify(text, severity=SEVERITY.get(event.level, "information"),
                         timeout=10 if event.level != "info" else 5)

    def memory(self, event: MemoryProgress) -> None:
        """Embedding moved on: a line while a backfill runs; no model is said once, as a toast."""
        self._memory = event.text if event.running and event.total else ""
        if event.unavailable is not None and event.unavailable != MEMORY_OFF_SETTING:
            text = unavailable_notice(neutralize(event.unavailable))
            if text not in self._said:
                self._said.add(text)
                self._app.notify(text, severity="warning", timeout=10)
        self.refresh()

    def lines(self) -> list[str]:
        """What the status shows now: one line per running thing, else the runtime's word or the notes;
        then how far embedding is while it runs."""
        shown = self._work_lines()
        return [*shown, f"⟳ {self._memory}"] if self._memory else shown

    def _work_lines(self) -> list[str]:
        running = self._agents_running()
        if not running:
            self._running.clear()  # a reply that never reported its end must not hang on the screen
        if self._running:
            moment = now()
            shown = []
            for item in self._running.values():
                hint = self._live_hint(item.conversation_id) if item.conversation_id else ""
                line = f"⟳ {item.text} {elapsed(moment - item.started)}"
                if item.meter:
                    line += f" · {item.meter}"
                shown.append(f"{line} — {hint}" if hint else line)
            return shown
        if running and self._progress:
            return [f"⟳ {self._progress}"]
        return ["  ·  ".join(self.notes)] if self.notes else []

    def refresh(self) -> None:
        """Bring the lines in line with what runs now; while something runs they tick every second."""
        self._app.set_status("\n".join(self.lines()))
        if self._running and self._ticker is None:
            self._ticker = self._app.set_interval(1.0, self.refresh, name="status elapsed time")
        elif not self._running and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
