"""An ACP agent (``type = "acp"``) as a tunaflow engine.

The agent is spawned here, not with ``acp.spawn_agent_process``: it keeps the full environment (API
keys), runs in its own process group with the turn's mark (so cancel and close end everything it
started) and has its stderr read all the time (an agent that floods stderr cannot stall the
protocol); the last lines of stderr go on error cards. The SDK's ``connect_to_agent`` speaks the
protocol over the pipes.

A turn: ``initialize`` → a session (new, or the stored one: ``session/resume`` where the agent
advertises it, else ``session/load`` with its replay dropped; a branch's first turn forks the parent's
with ``session/fork`` where the agent offers it) → the role's mode → ``session/prompt``.
Cancel sends ``session/cancel``, answers open permission requests ``cancelled``, waits a grace
period for the prompt to end and then ends the process group.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import shlex
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import cast

import acp
from acp.schema import (
    AgentCapabilities,
    AudioContentBlock,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    FileSystemCapabilities,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    PromptResponse,
    ResourceContentBlock,
    SessionModeState,
    TextContentBlock,
)

from tunaflow_tui import __version__
from tunaflow_tui.agents.acp.auth import auth_hint
from tunaflow_tui.agents.acp.client import TurnClient
from tunaflow_tui.agents.acp.files import ScopedFiles
from tunaflow_tui.agents.acp.updates import UpdateTranslator
from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    Notice,
    ProcessStarted,
    SessionStarted,
    TextDelta,
    Usage,
)
from tunaflow_tui.agents.base import Engine, PermissionProfile, Turn, TurnRequest
from tunaflow_tui.agents.json_fields import token_count
from tunaflow_tui.agents.limits import line_limit, wire_limit
from tunaflow_tui.agents.process import STDERR_TAIL_BYTES, end_turn_group, exited, merged_env, tail_text
from tunaflow_tui.agents.redaction import masked_events
from tunaflow_tui.core.processes import LIVE_GROUPS, identify
from tunaflow_tui.core.secret_masking import SecretRegistry, StreamMasker
from tunaflow_tui.core.settings.engines import EngineConfig
from tunaflow_tui.core.turn_marks import MARK_VARIABLE, new_mark

#: how long the agent may take to end its prompt after ``session/cancel`` before its group is killed
CANCEL_GRACE_S = 2.0
#: how long a process may take to exit after SIGTERM before the group gets SIGKILL
KILL_GRACE_S = 2.0
#: the pipes' read buffer: small, so an agent that floods a pipe nobody reads would block, not fill memory
READER_LIMIT = 65536
#: modes tried for each permission profile, first available wins; never one that skips asking
MODES: dict[PermissionProfile, tuple[str, ...]] = {
    PermissionProfile.READ_ONLY: ("plan", "read-only"),
    PermissionProfile.EDIT: ("default", "read-only"),
    PermissionProfile.CHAT: ("default", "read-only"),
}


class _End:
    """Queued by the driver once the prompt is over; carries the terminal event."""

    __slots__ = ("event",)

    def __init__(self, event: FinalMessage | EngineError) -> None:
        self.event = event


class _Refused(Exception):
    """The turn cannot go on; ``error`` is what the user sees."""

    def __init__(self, error: EngineError) -> None:
        super().__init__(error.message)
        self.error = error


class AcpEngine(Engine):
    """Runs turns with an agent that speaks the Agent Client Protocol on stdin/stdout."""

    def __init__(self, config: EngineConfig) -> None:
        """Configure the engine; nothing runs until ``start``."""
        self.config = config
        self.name = config.name or "acp"
        self.type = "acp"
        self._always: dict[str, set[str]] = {}
        #: each agent session's cumulative cost (USD) at the end of its last turn here: a turn's cost is the difference
        self.session_costs: dict[str, float] = {}
        #: whether the agent offered ``session/fork`` when it last started here (None: not started yet)
        self.offers_fork: bool | None = None

    @property
    def supports_native_fork(self) -> bool:
        """True once the agent has said it forks sessions (``sessionCapabilities.fork``): a branch then
        continues the parent's session through ``session/fork``; until then branches inherit their context."""
        return bool(self.offers_fork)

    def always_allowed(self, session_id: str) -> set[str]:
        """The tool kinds the user allowed for the rest of agent session ``session_id`` (kept across turns)."""
        return self._always.setdefault(session_id, set())

    def argv(self) -> list[str]:
        """The agent's command line: ``command`` split like a shell would (never run by one), then extra_args."""
        return [*shlex.split(self.config.command), *self.config.extra_args]

    def start(self, request: TurnRequest) -> Turn:
        """Start a turn (the agent is spawned when the turn is iterated)."""
        return AcpTurn(self, request)


class AcpTurn(Turn):
    """One prompt to one ACP agent process."""

    def __init__(self, engine: AcpEngine, request: TurnRequest) -> None:
        """Prepare the turn; nothing starts until it is iterated."""
        self._engine = engine
        self._config = engine.config
        self._request = request
        self._env = merged_env(self._config.env, request.extra_env)
        self._registry = SecretRegistry.from_env(self._env)
        self._mark = new_mark()
        self._proc: asyncio.subprocess.Process | None = None
        self._conn: acp.core.ClientSideConnection | None = None
        self._client: TurnClient | None = None
        self._driver: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._stdout_task: asyncio.Task[None] | None = None
        self._overflow = ""
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._session_id: str | None = None
        self._wanted_mode: str | None = None
        self._cancelled = False
        self._started = False
        self._stopping: asyncio.Future[None] | None = None
        self.translator = UpdateTranslator(request.cwd)

    def __aiter__(self) -> AsyncIterator[EngineEvent]:
        """Run the agent and yield its events, ending with exactly one terminal event."""
        if self._started:
            raise RuntimeError("a turn can be iterated only once")
        self._started = True
        return self._events()

    async def cancel(self) -> None:
        """Cancel the prompt, answer open permission requests ``cancelled`` and end the agent's group."""
        self._cancelled = True
        await self._stop(graceful=True)

    # ----------------------------------------------------------------- the stream
    async def _events(self) -> AsyncIterator[EngineEvent]:
        try:
            async for event in masked_events(self._run(), self._registry):
                yield event
        finally:
            # the consumer may stop early or its task be cancelled: the agent is told before it is stopped
            await self._stop(graceful=True)

    def _error(self, kind: ErrorKind, message: str) -> EngineError:
        return EngineError(kind, message, stderr_tail=self.stderr_tail(), partial_text=self.translator.text,
                           exit_code=self._proc.returncode if self._proc else None)

    async def _run(self) -> AsyncIterator[EngineEvent]:
        if self._cancelled:
            yield self._error(ErrorKind.CANCELLED, "The turn was cancelled.")
            return
        try:
            argv = self._engine.argv()
        except ValueError as exc:
            yield EngineError(ErrorKind.BAD_REQUEST, f"The command of engine {self._engine.name!r} cannot be "
                                                     f"read: {exc}; fix command under [engines.{self._engine.name}].")
            return
        if not argv:
            yield EngineError(ErrorKind.BAD_REQUEST, f"Engine {self._engine.name!r} has no command; set command = "
                                                     f"\"gemini --acp\" (or another ACP agent) under "
                                                     f"[engines.{self._engine.name}].")
            return
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *argv, cwd=str(self._request.cwd), env={**self._env, MARK_VARIABLE: self._mark},
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                start_new_session=True, limit=READER_LIMIT)
        except (FileNotFoundError, PermissionError) as exc:
            yield EngineError(ErrorKind.BINARY_MISSING, f"The command {argv[0]!r} cannot be run: {exc.strerror}. "
                                                        f"Install the agent, or set command under "
                                                        f"[engines.{self._engine.name}].")
            return
        except OSError as exc:
            yield EngineError(ErrorKind.CRASHED, f"Could not start {argv[0]!r}: {exc}.")
            return
        identity = identify(self._proc.pid)
        LIVE_GROUPS.add(identity)
        yield ProcessStarted(identity.pid, identity.pgid, identity.start_ticks)
        self._stderr_task = asyncio.create_task(self._drain_stderr(self._proc))
        queue: asyncio.Queue[EngineEvent | _End] = asyncio.Queue()
        profile = self._request.profile
        self._client = TurnClient(
            sink=queue.put_nowait,
            files=ScopedFiles(self._request.cwd, writable=profile is not PermissionProfile.READ_ONLY,
                              needs_grant=profile is PermissionProfile.CHAT),
            translator=self.translator, engine=self._engine.name, role=self._request.role,
            broker=self._request.permissions, allowed_commands=self._config.allow_commands,
            on_mode_change=self._mode_changed, always=self._engine.always_allowed)
        assert self._proc.stdin is not None
        reader = asyncio.StreamReader(limit=READER_LIMIT)
        self._stdout_task = asyncio.create_task(self._forward_stdout(self._proc, reader))
        self._conn = acp.connect_to_agent(cast(acp.Client, self._client), self._proc.stdin, reader)
        self._driver = asyncio.create_task(self._drive(self._conn, queue))
        async for event in self._pump(queue):
            yield event

    async def _pump(self, queue: asyncio.Queue[EngineEvent | _End]) -> AsyncIterator[EngineEvent]:
        """Pass events on until the driver ends the turn, a timeout fires or the agent dies."""
        config = self._config
        started = last = time.monotonic()
        reply_bytes = 0
        proc = self._proc
        assert proc is not None
        exited_at: float | None = None
        getter: asyncio.Task[EngineEvent | _End] | None = None
        try:
            while True:
                now = time.monotonic()
                if self._cancelled:
                    yield self._error(ErrorKind.CANCELLED, "The turn was cancelled.")
                    return
                idle_left = config.timeout_idle_s - (now - last)
                total_left = config.timeout_total_s - (now - started)
                if idle_left <= 0 or total_left <= 0:
                    pending = self._client.permissions_pending if self._client else 0
                    if self._client is not None:
                        self._client.cancel_pending("timeout")  # the cards say the timeout ended them
                    await self._stop(graceful=True)
                    message = (f"No output for {config.timeout_idle_s:g} s; the agent was stopped."
                               if idle_left <= 0 else
                               f"The turn took longer than {config.timeout_total_s:g} s and was stopped.")
                    if pending:
                        message += " A permission request nobody answered was cancelled."
                    yield self._error(ErrorKind.TIMEOUT, message)
                    return
                if self._overflow:
                    await self._stop(graceful=False)
                    yield self._error(ErrorKind.OUTPUT_TOO_LARGE, self._overflow)
                    return
                if exited_at is None and proc.returncode is not None:
                    exited_at = now
                if exited_at is not None and now - exited_at > 1.0:
                    yield self._error(ErrorKind.CRASHED, f"The agent exited (code {proc.returncode}) before "
                                                         "the turn ended.")
                    return
                if getter is None:
                    getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({getter}, timeout=min(idle_left, total_left, 0.05),
                                   return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    continue
                item = getter.result()
                getter = None
                if isinstance(item, _End):
                    if self._overflow:
                        await self._stop(graceful=False)
                        yield self._error(ErrorKind.OUTPUT_TOO_LARGE, self._overflow)
                    elif self._cancelled:
                        yield self._error(ErrorKind.CANCELLED, "The turn was cancelled.")
                    else:
                        yield item.event
                    return
                last = time.monotonic()
                if isinstance(item, TextDelta):
                    reply_bytes += len(item.text.encode("utf-8"))
                if reply_bytes > config.max_output_bytes:
                    await self._stop(graceful=True)
                    yield self._error(ErrorKind.OUTPUT_TOO_LARGE, f"The agent sent more than "
                                                                  f"{config.max_output_bytes} bytes; it was stopped.")
                    return
                yield item
        finally:
            if getter is not None:
                getter.cancel()

    # ----------------------------------------------------------------- the protocol
    async def _drive(self, conn: acp.core.ClientSideConnection, queue: asyncio.Queue[EngineEvent | _End]) -> None:
        init: InitializeResponse | None = None
        try:
            writable = self._request.profile is not PermissionProfile.READ_ONLY
            init = await conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=writable), terminal=False),
                client_info=Implementation(name="tunaflow", title="tunaflow", version=__version__))
            caps = init.agent_capabilities or AgentCapabilities()
            session_caps = caps.session_capabilities
            self._engine.offers_fork = session_caps is not None and session_caps.fork is not None
            session_id, modes = await self._open_session(conn, caps, queue)
            self._session_id = session_id
            queue.put_nowait(SessionStarted(session_id))
            if self._config.model:
                queue.put_nowait(Notice(f"model = {self._config.model!r} is not sent to an ACP agent: choose its "
                                        "model in the agent's own settings.", "warning"))
            await self._choose_mode(conn, session_id, modes)
            blocks: list[TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock
                         | EmbeddedResourceContentBlock] = []
            if self._request.system and not self._request.resume_session_id:
                blocks.append(acp.text_block(self._request.system))
            blocks.append(acp.text_block(self._request.prompt))
            response = await conn.prompt(session_id=session_id, prompt=blocks)
            for event in self._usage(response):
                queue.put_nowait(event)
            queue.put_nowait(_End(self._verdict(response)))
        except _Refused as refused:
            queue.put_nowait(_End(refused.error))
        except acp.RequestError as exc:
            queue.put_nowait(_End(self._request_error(exc, init)))
        except (ConnectionError, BrokenPipeError, asyncio.IncompleteReadError) as exc:
            if self._proc is not None:
                await exited(self._proc, 1.0)
            code = self._proc.returncode if self._proc else None
            queue.put_nowait(_End(self._error(ErrorKind.CRASHED, f"The agent closed the connection"
                                                                 f"{f' (exit code {code})' if code is not None else ''}"
                                                                 f" before the turn ended: {exc or 'no reply'}.")))
        except Exception as exc:  # the SDK's validation of a malformed reply, or a bug: a clear card, not a hang
            queue.put_nowait(_End(self._error(ErrorKind.MALFORMED_OUTPUT, f"The agent's reply could not be "
                                                                          f"read: {type(exc).__name__}: {exc}")))

    async def _open_session(self, conn: acp.core.ClientSideConnection, caps: AgentCapabilities,
                            queue: asyncio.Queue[EngineEvent | _End]) -> tuple[str, SessionModeState | None]:
        cwd = str(self._request.cwd.resolve())
        stored = self._request.resume_session_id
        if stored is None:
            created = await conn.new_session(cwd=cwd, mcp_servers=[])
            self.translator.cost_baseline = 0.0  # a new session has cost nothing before this turn
            return created.session_id, created.modes
        self.translator.cost_baseline = self._engine.session_costs.get(stored)
        session_caps = caps.session_capabilities
        if self._request.fork:
            if session_caps is None or session_caps.fork is None:
                raise _Refused(self._error(ErrorKind.BAD_REQUEST, "This ACP agent does not fork sessions; the "
                                                                  "branch starts a new one with its inherited context."))
            forked = await conn.fork_session(session_id=stored, cwd=cwd, mcp_servers=[])
            return forked.session_id, forked.modes
        if session_caps is not None and session_caps.resume is not None:
            # the agent keeps its own memory; tunaflow's database has the history, so nothing is replayed
            resumed = await conn.resume_session(session_id=stored, cwd=cwd, mcp_servers=[])
            return stored, resumed.modes
        if caps.load_session:
            self.translator.replaying = True
            try:
                loaded = await conn.load_session(cwd=cwd, session_id=stored, mcp_servers=[])
                await asyncio.sleep(0)  # let the replay's last notifications run while they are still dropped
            finally:
                self.translator.replaying = False
            return stored, loaded.modes if loaded is not None else None
        raise _Refused(self._error(ErrorKind.BAD_REQUEST, "This ACP agent cannot reopen a session; a new one "
                                                          "is started."))

    async def _choose_mode(self, conn: acp.core.ClientSideConnection, session_id: str,
                           modes: SessionModeState | None) -> None:
        """Put the session in the role's mode (``plan`` for a reviewer, ``default`` otherwise)."""
        if modes is None:
            return
        available = {mode.id for mode in modes.available_modes}
        wanted = next((m for m in MODES[self._request.profile] if m in available), None)
        self._wanted_mode = wanted
        self.translator.mode = modes.current_mode_id
        if wanted is not None and wanted != modes.current_mode_id:
            await conn.set_session_mode(session_id=session_id, mode_id=wanted)
            self.translator.mode = wanted

    async def _mode_changed(self, mode: str) -> None:
        """The agent switched modes by itself: put the role's mode back."""
        if self._wanted_mode is None or mode == self._wanted_mode or self._conn is None or not self._session_id:
            return
        with contextlib.suppress(Exception):
            await self._conn.set_session_mode(session_id=self._session_id, mode_id=self._wanted_mode)
            self.translator.mode = self._wanted_mode

    def _usage(self, response: PromptResponse) -> list[EngineEvent]:
        """The turn's final usage: the prompt result's tokens (or gemini's quota), with the context and cost
        the agent's ``usage_update`` reported; the session's cost is kept for the next turn's difference."""
        translator = self.translator
        if translator.session_cost is not None and self._session_id:
            self._engine.session_costs[self._session_id] = translator.session_cost
        usage = response.usage
        quota = (response.field_meta or {}).get("quota")
        counts = quota.get("token_count") if isinstance(quota, dict) else None
        if usage is not None:
            final = translator.usage(usage.input_tokens, usage.output_tokens, usage.cached_read_tokens or 0)
        elif isinstance(counts, dict):  # gemini reports its tokens here
            final = translator.usage(token_count(counts.get("input_tokens")),
                                     token_count(counts.get("output_tokens")))
        else:
            final = translator.usage()
        return [final] if final != Usage() else []

    def _verdict(self, response: PromptResponse) -> FinalMessage | EngineError:
        reason = response.stop_reason
        if reason == "cancelled" or self._cancelled:
            return self._error(ErrorKind.CANCELLED, "The turn was cancelled.")
        if reason == "refusal":
            return self._error(ErrorKind.CRASHED, "The agent refused to go on with this prompt.")
        return FinalMessage(self.translator.text)

    def _request_error(self, exc: acp.RequestError, init: InitializeResponse | None) -> EngineError:
        message = str(exc)
        detail = f" ({exc.data})" if isinstance(exc.data, str | dict) and exc.data else ""
        lowered = message.lower()
        if exc.code == -32000 or "auth" in lowered or "api key" in lowered:
            hint = auth_hint(init.auth_methods if init else None)
            return self._error(ErrorKind.NOT_LOGGED_IN, f"The agent needs you to sign in: {message}.{hint}")
        if exc.code in (-32601, -32602) or "session" in lowered:
            return self._error(ErrorKind.BAD_REQUEST, f"The agent refused the request: {message}{detail}.")
        return self._error(ErrorKind.CRASHED, f"The agent reported an error: {message}{detail}.")

    # ----------------------------------------------------------------- the process
    async def _forward_stdout(self, proc: asyncio.subprocess.Process, reader: asyncio.StreamReader) -> None:
        """Pass the agent's stdout to the SDK, within the line and stream caps every engine has."""
        assert proc.stdout is not None
        max_line = line_limit(self._config.max_output_bytes)
        max_wire = wire_limit(self._config.max_output_bytes)
        total = line = 0
        try:
            while chunk := await proc.stdout.read(READER_LIMIT):
                total += len(chunk)
                newline = chunk.rfind(b"\n")
                line = len(chunk) - newline - 1 if newline >= 0 else line + len(chunk)
                if line > max_line or total > max_wire:
                    self._overflow = (f"The agent sent a line longer than {max_line} bytes; it was stopped."
                                      if line > max_line else
                                      f"The agent sent more than {max_wire} bytes; it was stopped.")
                    return
                reader.feed_data(chunk)
        finally:
            reader.feed_eof()

    async def _drain_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        masker = StreamMasker(self._registry)
        try:
            while chunk := await proc.stderr.read(65536):
                self._keep_stderr(masker.feed(decoder.decode(chunk)))
        finally:
            self._keep_stderr(masker.feed(decoder.decode(b"", final=True)) + masker.flush(final=True))

    def _keep_stderr(self, masked: str) -> None:
        data = masked.encode("utf-8")
        self._stderr.append(data)
        self._stderr_size += len(data)
        while self._stderr and self._stderr_size - len(self._stderr[0]) >= STDERR_TAIL_BYTES:
            self._stderr_size -= len(self._stderr.popleft())

    def stderr_tail(self) -> str:
        """The last lines the agent wrote on stderr."""
        return tail_text(b"".join(self._stderr)[-STDERR_TAIL_BYTES:])

    async def _stop(self, *, graceful: bool) -> None:
        """End the turn's agent: ``session/cancel`` first when ``graceful``, then the process group.

        Every caller (cancel, a timeout, the stream's end) waits for the one stop, so none goes on
        while the agent still runs; a caller cancelled meanwhile does not interrupt it.
        """
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop_once(graceful))
        await asyncio.shield(self._stopping)

    async def _stop_once(self, graceful: bool) -> None:
        client, conn, driver = self._client, self._conn, self._driver
        if graceful and conn is not None and self._session_id and driver is not None and not driver.done():
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await conn.cancel(session_id=self._session_id)
        if client is not None:
            client.cancel_pending()  # a MUST after session/cancel: no permission request stays open
        if graceful and driver is not None and not driver.done():
            await asyncio.wait({driver}, timeout=CANCEL_GRACE_S)
        await self._kill_group()
        if driver is not None and not driver.done():
            driver.cancel()
        for task in (driver, self._stdout_task, self._stderr_task):
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    async with asyncio.timeout(2.0):
                        await task
        await self._close_pipes()
        if client is not None:
            await client.close()
        if conn is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await conn.close()

    async def _close_pipes(self) -> None:
        """Read what the dead agent left in its pipes (so their transports close) and close its stdin."""
        proc = self._proc
        if proc is None:
            return
        for stream in (proc.stdout, proc.stderr):
            if stream is None:
                continue
            with contextlib.suppress(TimeoutError, OSError, ValueError):
                async with asyncio.timeout(1.0):
                    while await stream.read(READER_LIMIT):
                        pass
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()

    async def _kill_group(self) -> None:
        if self._proc is not None:
            await end_turn_group(self._proc, self._mark, KILL_GRACE_S)

