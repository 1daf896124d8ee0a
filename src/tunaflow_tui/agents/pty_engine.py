"""Drive any interactive CLI through a pseudo-terminal, for agents with no headless mode.

The program runs in the same terminal machinery as a native CLI in a pane
(:class:`~tunaflow_tui.agents.terminal.pty_session.PtySession`: its own session and process group, read
without blocking the loop, its queries answered by the emulator, the whole group ended with the turn).
A turn spawns the command, waits for ``prompt_pattern``, types the prompt as one line (whole, however
long: see :mod:`.pty_input`), and streams the answer with terminal control sequences removed. The reply
ends when the prompt comes back, after ``idle_end_s`` of silence, or when the program exits. Everything
the program prints counts against the output cap. No native session: continuity comes from the
ContextPack in the prompt.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shutil
import time
from collections.abc import AsyncIterator, Callable

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
from tunaflow_tui.agents.terminal.pty_session import PtySession, PtySpec
from tunaflow_tui.core.processes import identify
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
_LINES, _COLUMNS = 50, 200
#: the end of the program's output, in the queue of what it printed
_EXITED = None
_REAP_S = 10.0

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
        self._cancel = asyncio.Event()
        self._queue: asyncio.Queue[EngineEvent] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._output: asyncio.Queue[str | None] = asyncio.Queue()  # what the program printed; None: it ended
        self._reaped = asyncio.Event()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._session: PtySession | None = None
        self._parts: list[str] = []
        self._size = 0
        self._wire = 0  # bytes read from the terminal, control sequences included
        self.child_pid: int | None = None
        self._mark = new_mark()

    def __aiter__(self) -> AsyncIterator[EngineEvent]:
        """The turn's events with the secrets of its environment (and well-known token shapes) masked."""
        return masked_events(self._events(), SecretRegistry.from_env({**os.environ, **self.config.env, **self.request.extra_env}))

    async def _events(self) -> AsyncIterator[EngineEvent]:
        """Yield events from the conversation with the program until the terminal one."""
        if self._task is None:
            if self._cancel.is_set():
                yield EngineError(ErrorKind.CANCELLED, "cancelled")
                return
            self._task = asyncio.get_running_loop().create_task(self._work(), name="tunaflow-pty-turn")
        try:
            while True:
                event = await self._queue.get()
                yield event
                if isinstance(event, TERMINAL_EVENTS):
                    return
        finally:
            self._cancel.set()  # nobody listens any more: the program goes with the turn

    async def cancel(self) -> None:
        """Terminate the program and its process group; the turn ends with ``CANCELLED``."""
        self._cancel.set()
        self._output.put_nowait("")  # wake a reader waiting for output

    # --- the conversation ----------------------------------------------------------------------

    async def _work(self) -> None:
        emit = self._queue.put_nowait
        try:
            emit(await self._converse(emit))
        except _Cancelled:
            emit(EngineError(ErrorKind.CANCELLED, "cancelled", partial_text=self._text()))
        except Exception as exc:  # the stream must always end with a terminal event
            emit(EngineError(ErrorKind.CRASHED, f"pty engine failed: {exc}", partial_text=self._text()))

    def _text(self) -> str:
        return "".join(self._parts).strip("\n")

    def _spawn(self) -> PtySession | EngineError:
        command = self.config.command
        path = shutil.which(command) if command else None
        if path is None:
            return EngineError(ErrorKind.BINARY_MISSING,
                               f"{command or '(no command configured)'} was not found on PATH")
        # the mark finds what the program started even after it left the session (setsid)
        env = {**self.config.env, **self.request.extra_env, MARK_VARIABLE: self._mark}
        # a reply is read as fast as the program writes, to the wire cap, not at the emulator's pace
        spec = PtySpec([path, *self.config.extra_args], self.request.cwd, env, _LINES, _COLUMNS, scrollback=0,
                       echo=False, pause_above=wire_limit(self.config.max_output_bytes))
        session = PtySession(spec, on_data=self._read, on_exit=lambda _code: self._reaped.set())
        session.start()
        self._session = session
        self.child_pid = session.pid
        return session

    def _read(self, data: bytes) -> None:
        if not data:
            self._output.put_nowait(_EXITED)
            return
        # everything the program prints counts, control sequences included
        self._wire += len(data)
        self._output.put_nowait(self._decoder.decode(data))

    async def _converse(self, emit: Emit) -> EngineEvent:
        spawned = self._spawn()
        if isinstance(spawned, EngineError):
            return spawned
        session = spawned
        assert session.pid is not None
        identity = identify(session.pid)  # the program leads its own session and process group
        try:
            emit(ProcessStarted(identity.pid, identity.pgid, identity.start_ticks))
            return await self._dialogue(session)
        finally:
            await session.close(grace_s=0.4)
            end_marked(self._mark)

    async def _dialogue(self, session: PtySession) -> EngineEvent:
        pattern = re.compile(self.config.prompt_pattern) if self.config.prompt_pattern else None
        deadline = time.monotonic() + self.config.timeout_total_s
        # 1. wait for the program to be ready
        status = await self._read_until(pattern, deadline, None)
        if isinstance(status, EngineError):
            return status
        # 2. type the prompt as one line (interactive programs read a line at a time), all of it
        line = as_one_line(self.request.prompt)
        typed = await type_line(session, line, stall_s=self.config.timeout_idle_s, cancelled=self._cancel.is_set)
        if self._cancel.is_set():
            raise _Cancelled
        if not typed.complete and not typed.exited:
            return EngineError(
                ErrorKind.BAD_REQUEST,
                f"{self.config.command} stopped reading the prompt after {typed.sent_bytes} of "
                f"{typed.total_bytes} bytes (nothing read for {self.config.timeout_idle_s:g}s); it was not sent whole",
            )
        # 3. stream the answer (what it printed while the prompt was typed included)
        status = await self._read_until(pattern, deadline, self._queue.put_nowait, echo=line)
        if isinstance(status, EngineError):
            return status
        text = self._text()
        self._queue.put_nowait(Usage(input_tokens=len(line) // 4, output_tokens=len(text) // 4))
        return FinalMessage(text)

    async def _next_output(self, timeout: float) -> str | None:
        """What the program printed next ('' after ``timeout`` of silence), or None once it ended."""
        try:
            return await asyncio.wait_for(self._output.get(), timeout)
        except TimeoutError:
            return ""

    async def _read_until(self, pattern: re.Pattern[str] | None, deadline: float,
                          emit: Emit | None, echo: str | None = None) -> EngineError | None:
        """Read until the prompt shows, silence, or exit; with ``emit``, stream complete lines."""
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
            raw = await self._next_output(_POLL_S)
            if raw is _EXITED:
                self._flush(pending, emit)
                with contextlib.suppress(TimeoutError):  # its exit status (the session ends it if it lingers)
                    await asyncio.wait_for(self._reaped.wait(), _REAP_S)
                return self._exited(emit is not None)
            if not raw:
                if self._cancel.is_set():
                    raise _Cancelled
                now = time.monotonic()
                quiet_since = last_output if emit is not None else (last_output or started)
                ends_on_silence = emit is not None or pattern is None
                if ends_on_silence and quiet_since is not None and now - quiet_since >= self.config.idle_end_s:
                    self._flush(pending, emit)
                    return None
                if now - (last_output or started) >= self.config.timeout_idle_s:
                    return EngineError(ErrorKind.TIMEOUT, f"no output for {self.config.timeout_idle_s:g}s",
                                       partial_text=self._text())
                continue
            last_output = time.monotonic()
            # a flood is stopped at the cap whether or not any of it is visible, and so is a line that never ends
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

    def _exited(self, answered: bool) -> EngineError | None:
        session = self._session
        code = session.exit_code if session is not None and session.exit_code is not None else 0
        if code == 0 and answered:
            return None
        what = f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"
        return EngineError(ErrorKind.CRASHED, f"{self.config.command} {what}", exit_code=code,
                           partial_text=self._text())


class PtyEngine(Engine):
    """An engine for interactive CLIs without a headless mode."""

    type = "pty"

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.name = config.name or self.type

    def start(self, request: TurnRequest) -> Turn:
        """Start a turn; the program is spawned when iteration begins."""
        return PtyTurn(self.config, request)
