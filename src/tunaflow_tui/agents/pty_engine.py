"""Drive any interactive CLI through a pseudo-terminal (pexpect), for agents with no headless mode.

pexpect blocks, so each turn runs the child in a worker thread and hands events to the asyncio loop
with ``call_soon_threadsafe``. A turn spawns the command (its own session and process group), waits
for ``prompt_pattern``, sends the prompt as one line, and streams the answer with terminal control
sequences removed (the prompt is typed whole, however long: see :mod:`.pty_input`). The reply ends
when the prompt comes back, after ``idle_end_s`` of silence, or when the program exits. Everything
the program prints counts against the output cap. No native session: continuity comes from the ContextPack in the prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable

import pexpect

from tunaflow_tui.agents.agent_events import (
    TERMINAL_EVENTS,
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    ProcessStarted,
    TextDelta,
    Usage,
)
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.agents.limits import line_limit, wire_limit
from tunaflow_tui.agents.pty_input import as_one_line, type_line
from tunaflow_tui.agents.redaction import masked_events
from tunaflow_tui.core.processes import LIVE_GROUPS, identify
from tunaflow_tui.core.secret_masking import SecretRegistry
from tunaflow_tui.core.settings.engines import EngineConfig
from tunaflow_tui.core.turn_marks import MARK_VARIABLE, end_marked, new_mark

_ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS / SOS / PM / APC strings
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
    r"|[\x00-\x08\x0b-\x1f\x7f]"  # remaining C0 controls except \n and \t (\r included)
)
_POLL_S = 0.05

Emit = Callable[[EngineEvent], None]


def strip_ansi(text: str) -> str:
    """Remove terminal control sequences and control characters (keeps newlines and tabs)."""
    return _ANSI_RE.sub("", text)


class _Cancelled(Exception):
    """The user cancelled the turn."""


class PtyTurn(Turn):
    """One prompt sent to a freshly spawned interactive program."""

    def __init__(self, config: EngineConfig, request: TurnRequest) -> None:
        self.config = config
        self.request = request
        self._cancel = threading.Event()
        self._queue: asyncio.Queue[EngineEvent] = asyncio.Queue()
        self._thread: threading.Thread | None = None
        self._parts: list[str] = []
        self._size = 0
        self._wire = 0  # bytes read from the terminal, control sequences included
        self.child_pid: int | None = None
        self._mark = new_mark()

    def __aiter__(self) -> AsyncIterator[EngineEvent]:
        """The turn's events with the secrets of its environment (and well-known token shapes) masked."""
        return masked_events(self._events(), SecretRegistry.from_env({**os.environ, **self.config.env, **self.request.extra_env}))

    async def _events(self) -> AsyncIterator[EngineEvent]:
        """Yield events from the worker thread until the terminal one."""
        if self._thread is None:
            if self._cancel.is_set():
                yield EngineError(ErrorKind.CANCELLED, "cancelled")
                return
            loop = asyncio.get_running_loop()
            self._thread = threading.Thread(target=self._work, args=(loop,), name="tunaflow-pty", daemon=True)
            self._thread.start()
        while True:
            event = await self._queue.get()
            yield event
            if isinstance(event, TERMINAL_EVENTS):
                return

    async def cancel(self) -> None:
        """Terminate the program and its process group; the turn ends with ``CANCELLED``."""
        self._cancel.set()

    # --- worker thread -------------------------------------------------------------------------

    def _work(self, loop: asyncio.AbstractEventLoop) -> None:
        def emit(event: EngineEvent) -> None:
            loop.call_soon_threadsafe(self._queue.put_nowait, event)

        try:
            emit(self._converse(emit))
        except _Cancelled:
            emit(EngineError(ErrorKind.CANCELLED, "cancelled", partial_text=self._text()))
        except Exception as exc:  # the stream must always end with a terminal event
            emit(EngineError(ErrorKind.CRASHED, f"pty engine failed: {exc}", partial_text=self._text()))

    def _text(self) -> str:
        return "".join(self._parts).strip("\n")

    def _spawn(self) -> pexpect.spawn | EngineError:
        command = self.config.command
        path = shutil.which(command) if command else None
        if path is None:
            return EngineError(ErrorKind.BINARY_MISSING,
                               f"{command or '(no command configured)'} was not found on PATH")
        # the mark finds what the program started even after it left the session (setsid)
        env = {**os.environ, **self.config.env, **self.request.extra_env, MARK_VARIABLE: self._mark}
        child = pexpect.spawn(path, list(self.config.extra_args), cwd=str(self.request.cwd), env=env,
                              encoding="utf-8", codec_errors="replace", dimensions=(50, 200), echo=False)
        child.delaybeforesend = None
        self.child_pid = child.pid
        return child

    def _converse(self, emit: Emit) -> EngineEvent:
        spawned = self._spawn()
        if isinstance(spawned, EngineError):
            return spawned
        child = spawned
        identity = identify(child.pid)  # the child leads its own session (pty.fork calls setsid)
        LIVE_GROUPS.add(identity)
        try:
            emit(ProcessStarted(identity.pid, identity.pgid, identity.start_ticks))
            return self._dialogue(child, emit)
        finally:
            _kill_group(child)
            end_marked(self._mark)
            LIVE_GROUPS.discard(identity.pgid)

    def _dialogue(self, child: pexpect.spawn, emit: Emit) -> EngineEvent:
        pattern = re.compile(self.config.prompt_pattern) if self.config.prompt_pattern else None
        deadline = time.monotonic() + self.config.timeout_total_s
        # 1. wait for the program to be ready
        status = self._read_until(child, pattern, deadline, None)
        if isinstance(status, EngineError):
            return status
        # 2. type the prompt as one line (interactive programs read a line at a time), all of it
        line = as_one_line(self.request.prompt)
        typed = type_line(child, line, stall_s=self.config.timeout_idle_s, cancelled=self._cancel.is_set)
        if self._cancel.is_set():
            raise _Cancelled
        if not typed.complete and not typed.exited:
            return EngineError(
                ErrorKind.BAD_REQUEST,
                f"{self.config.command} stopped reading the prompt after {typed.sent_bytes} of "
                f"{typed.total_bytes} bytes (nothing read for {self.config.timeout_idle_s:g}s); it was not sent whole",
            )
        # 3. stream the answer
        status = self._read_until(child, pattern, deadline, emit, echo=line, initial=typed.output)
        if isinstance(status, EngineError):
            return status
        text = self._text()
        emit(Usage(input_tokens=len(line) // 4, output_tokens=len(text) // 4))
        return FinalMessage(text)

    def _read_until(self, child: pexpect.spawn, pattern: re.Pattern[str] | None, deadline: float,
                    emit: Emit | None, echo: str | None = None, initial: str = "") -> EngineError | None:
        """Read until the prompt shows, silence, or exit; with ``emit``, stream complete lines.

        ``initial`` is output already read (while the prompt was typed), handled first.
        """
        pending = ""  # the current, unfinished line (a prompt appears there)
        started = time.monotonic()
        last_output: float | None = None
        config = self.config
        while True:
            if self._cancel.is_set():
                raise _Cancelled
            now = time.monotonic()
            if now > deadline:
                return EngineError(ErrorKind.TIMEOUT, f"no complete reply within {self.config.timeout_total_s:g}s",
                                   partial_text=self._text())
            try:
                raw = initial or child.read_nonblocking(4096, timeout=_POLL_S)
                initial = ""
            except pexpect.TIMEOUT:
                quiet_since = last_output if emit is not None else (last_output or started)
                ends_on_silence = emit is not None or pattern is None
                if ends_on_silence and quiet_since is not None and now - quiet_since >= self.config.idle_end_s:
                    self._flush(pending, emit)
                    return None
                if now - (last_output or started) >= self.config.timeout_idle_s:
                    return EngineError(ErrorKind.TIMEOUT, f"no output for {self.config.timeout_idle_s:g}s",
                                       partial_text=self._text())
                continue
            except pexpect.EOF:
                self._flush(pending, emit)
                return self._exited(child, emit is not None)
            last_output = time.monotonic()
            # everything the program prints counts, control sequences included, and so does a line
            # that never ends: a flood is stopped at the cap whether or not any of it is visible
            self._wire += len(raw.encode("utf-8", errors="replace"))
            if self._wire > wire_limit(config.max_output_bytes):
                return EngineError(ErrorKind.OUTPUT_TOO_LARGE,
                                   f"{config.command} printed more than {wire_limit(config.max_output_bytes)} bytes",
                                   partial_text=self._text())
            pending += strip_ansi(raw)
            *lines, pending = pending.split("\n")
            for done in lines:
                if echo is not None and done.strip() == echo.strip():
                    echo = None  # the terminal echoed our input: not part of the answer
                    continue
                echo = None
                if emit is not None:
                    error = self._add(done + "\n", emit)
                    if error is not None:
                        return error
            if len(pending) > line_limit(config.max_output_bytes):
                return EngineError(ErrorKind.OUTPUT_TOO_LARGE,
                                   f"{config.command} printed a line longer than "
                                   f"{line_limit(config.max_output_bytes)} characters", partial_text=self._text())
            if pattern is not None and pattern.search(pending):
                return None

    def _flush(self, pending: str, emit: Emit | None) -> None:
        if emit is not None and pending.strip():
            self._add(pending, emit)

    def _add(self, text: str, emit: Emit) -> EngineError | None:
        self._size += len(text.encode("utf-8"))
        if self._size > self.config.max_output_bytes:
            return EngineError(ErrorKind.OUTPUT_TOO_LARGE,
                               f"output exceeded {self.config.max_output_bytes} bytes", partial_text=self._text())
        self._parts.append(text)
        emit(TextDelta(text))
        return None

    def _exited(self, child: pexpect.spawn, answered: bool) -> EngineError | None:
        child.close()
        code = child.exitstatus if child.exitstatus is not None else -(child.signalstatus or 0)
        if code == 0 and answered:
            return None
        what = f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"
        return EngineError(ErrorKind.CRASHED, f"{self.config.command} {what}", exit_code=code,
                           partial_text=self._text())


def _kill_group(child: pexpect.spawn) -> None:
    """Terminate the child's whole process group (it leads its own session), then reap it."""
    if child.isalive():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGTERM)
        for _ in range(20):
            if not child.isalive():
                break
            time.sleep(0.02)
    # whatever the program started and left behind in its group (and the program, if it ignored SIGTERM)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        child.close(force=True)


class PtyEngine(Engine):
    """An engine for interactive CLIs without a headless mode."""

    type = "pty"

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.name = config.name or self.type

    def start(self, request: TurnRequest) -> Turn:
        """Start a turn; the program is spawned when iteration begins."""
        return PtyTurn(self.config, request)
