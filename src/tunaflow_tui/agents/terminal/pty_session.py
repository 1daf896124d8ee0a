"""A program running under a pseudo-terminal, its output parsed into an :class:`.Emulator` by a thread.

The PTY's master side is read without blocking (``loop.add_reader``) into a backlog; a parsing thread
feeds the emulator from it in pieces of :data:`PIECE` bytes, taking the emulator's lock for each piece
and handing the interpreter back after it. A program that floods its terminal then costs the event
loop a fraction of a millisecond at each of its turns instead of a parsing step (pyte parses a busy
coloured stream at well under 1 MB/s), so keys and drawing elsewhere in the app stay quick. Above
:data:`PAUSE_ABOVE` bytes waiting, reading stops: the kernel's PTY buffer fills and the program blocks
on its writes until the backlog drains. While asked to give way (:meth:`PtySession.give_way`, e.g.
while the user types elsewhere in the app), the thread rests between pieces, so the program is held
back sooner. Writes to the program (keys, and the emulator's replies to
its queries) are queued on the loop and sent as the PTY accepts them.

The program leads its own session and process group (``setsid``, the PTY is its controlling
terminal); :meth:`PtySession.close` ends the whole group (SIGHUP, then SIGTERM, then SIGKILL) and
reaps the program. Its own end is seen as EOF on the PTY (EIO on Linux), once everything it wrote
before is parsed.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ptyprocess import PtyProcess

from tunaflow_tui.agents.terminal.emulator import Emulator
from tunaflow_tui.core.processes import LIVE_GROUPS, end_group, identify, signal_group

PIECE = 128
"""Bytes parsed under one hold of the emulator's lock (about a millisecond of pyte's time)."""
PAUSE_ABOVE = 1 << 20
"""Backlog (bytes read, not parsed yet) above which the PTY is no longer read."""
GIVE_WAY_REST = 1.0
"""While the parsing thread gives way, it rests this many times as long as its last piece took."""
_READ = 65536
_POLL_S = 0.02
_RUNNING: set[PtySession] = set()


def _end_running() -> None:
    """At exit: end the groups of sessions nobody closed (their PTY's end alone spares a program that ignores SIGHUP)."""
    for session in list(_RUNNING):
        if session.pid is not None:
            end_group(identify(session.pid), grace_s=0.5)


@dataclass(frozen=True)
class PtySpec:
    """What to run and how big its terminal starts.

    ``env`` is added to tunaflow's own environment; ``TERM`` is ``xterm-256color`` unless it says otherwise.
    ``echo`` off: the terminal does not echo what is typed (a program driven by tunaflow rather than a
    person). ``pause_above``: backlog (bytes read, not parsed yet) above which the program is held back
    (None: :data:`PAUSE_ABOVE`).
    """

    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)
    lines: int = 24
    columns: int = 80
    scrollback: int = 10_000
    echo: bool = True
    pause_above: int | None = None


class PtySession:
    """One live program in a terminal pane.

    Args:
        spec: The program, its folder, environment and terminal size.
        on_output: Called after output was parsed into :attr:`emulator`, from the parsing thread: it
            should only note that there is something new (set a flag) and let the loop look later.
        on_exit: Called once (on the loop) when the program has ended and been reaped, with its exit
            code (negative: killed by that signal).
        on_data: Called on the loop with every piece read from the program, as read (before parsing),
            and once with ``b""`` when its output has ended (its exit follows, with ``on_exit``).
    """

    def __init__(self, spec: PtySpec, on_output: Callable[[], None] | None = None,
                 on_exit: Callable[[int | None], None] | None = None,
                 on_data: Callable[[bytes], None] | None = None) -> None:
        self.spec = spec
        self.on_data = on_data
        self.emulator = Emulator(spec.columns, spec.lines, scrollback=spec.scrollback, reply=self._reply)
        self.on_output = on_output
        self.on_exit = on_exit
        self._proc: PtyProcess | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._backlog = bytearray()  # guarded by _ready, as is _eof
        self._ready = threading.Condition()
        self._outbox = bytearray()
        self._reading = False
        self._resume_asked = False  # the parsing thread asked the loop to read again
        self._writing = False
        self._eof = False
        self._parsed_all = asyncio.Event()  # the parsing thread saw the end and stopped
        self._parser: threading.Thread | None = None
        self._feeder: asyncio.Task[None] | None = None
        self._give_way_until = 0.0
        self.pauses = 0  # how often reading stopped because the backlog was over the cap
        self.exit_code: int | None = None
        self.ended = False
        self.started_at = 0.0
        self.ended_at: float | None = None

    # --- life ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the program (OSError when it cannot be: a missing binary, a bad folder)."""
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env.update({"TERM": "xterm-256color", "COLORTERM": "truecolor"})
        env.update(self.spec.env)
        proc = PtyProcess.spawn(list(self.spec.argv), cwd=str(self.spec.cwd), env=env, echo=self.spec.echo,
                                dimensions=(self.spec.lines, self.spec.columns))
        self._proc = proc
        self.started_at = time.monotonic()
        LIVE_GROUPS.add(identify(proc.pid))
        if not _RUNNING:
            atexit.unregister(_end_running)
            atexit.register(_end_running)
        _RUNNING.add(self)
        os.set_blocking(proc.fd, False)
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._resume_reading()
        self._parser = threading.Thread(target=self._parse, name=f"pty-parse-{proc.pid}", daemon=True)
        self._parser.start()
        self._feeder = self._loop.create_task(self._await_end(), name=f"pty-end-{proc.pid}")

    @property
    def pid(self) -> int | None:
        """The program's pid (it is also its process group's id)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        """Started and not seen to end yet."""
        return self._proc is not None and not self.ended

    @property
    def _pause_above(self) -> int:
        return self.spec.pause_above if self.spec.pause_above is not None else PAUSE_ABOVE

    @property
    def fd(self) -> int | None:
        """The PTY's master side (for terminal settings), while the program runs."""
        return self._proc.fd if self._proc is not None and not self.ended else None

    @property
    def unsent(self) -> int:
        """Bytes written to the program that its terminal has not taken yet."""
        return len(self._outbox)

    @property
    def backlog(self) -> int:
        """Bytes read from the program and not parsed yet."""
        with self._ready:
            return len(self._backlog)

    @property
    def reading(self) -> bool:
        """False while the backlog is over :data:`PAUSE_ABOVE` (the program is held back)."""
        return self._reading

    def give_way(self, seconds: float) -> None:
        """For the next ``seconds`` the parsing thread rests between its pieces (as long as each took), so
        the app's loop finds the interpreter and a core free more often, e.g. while the user types
        elsewhere in the app. The program is held back by its terminal meanwhile; nothing is lost."""
        self._give_way_until = time.monotonic() + seconds

    # --- output -------------------------------------------------------------------------------

    def _resume_reading(self) -> None:
        self._resume_asked = False
        if self._reading or self._eof or self._proc is None or self._loop is None:
            return
        self._loop.add_reader(self._proc.fd, self._read)
        self._reading = True

    def _pause_reading(self) -> None:
        if self._reading and self._proc is not None and self._loop is not None:
            self._loop.remove_reader(self._proc.fd)
        self._reading = False

    def _read(self) -> None:
        assert self._proc is not None
        try:
            data = os.read(self._proc.fd, _READ)
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            data = b""  # Linux: the slave side closed — the program is gone
        if self.on_data is not None:
            self.on_data(data)
        with self._ready:
            if data:
                self._backlog += data
                full = len(self._backlog) > self._pause_above
            else:
                self._eof = full = True
            self._ready.notify()
        if full:
            if data:
                self.pauses += 1
            self._pause_reading()

    def _parse(self) -> None:
        """The parsing thread: feed the emulator from the backlog until the program's end is parsed."""
        while True:
            with self._ready:
                while not self._backlog and not self._eof:
                    self._ready.wait()
                if not self._backlog:
                    break  # the end, and everything before it parsed
                piece = bytes(self._backlog[:PIECE])
                del self._backlog[:PIECE]
                left = len(self._backlog)
            began = time.monotonic()
            self.emulator.feed(piece)
            on_output = self.on_output
            if on_output is not None:
                on_output()
            if not self._reading and not self._resume_asked and left < self._pause_above // 2:
                self._resume_asked = True
                self._to_loop(self._resume_reading)
            # let the loop have the interpreter now, not after the switch interval (5 ms): a key
            # handled by the app waits for the interpreter at every turn of the loop
            now = time.monotonic()
            time.sleep((now - began) * GIVE_WAY_REST if now < self._give_way_until else 0)
        self._to_loop(self._parsed_all.set)

    def _to_loop(self, callback: Callable[[], None]) -> None:
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
                self._loop.call_soon_threadsafe(callback)

    def _reply(self, data: bytes) -> None:
        """The emulator's answer to a query goes to the program, from the loop."""
        if threading.get_ident() == self._loop_thread:
            self.write(data)
        elif self._loop is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self.write, data)

    async def _await_end(self) -> None:
        await self._parsed_all.wait()
        await self._reap(wait_s=2.0)

    # --- input --------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Send bytes to the program (keys, pastes, replies); queued while the PTY is full. Dropped once it ended."""
        if not data or self._proc is None or self.ended:
            return
        self._outbox += data
        self._flush()

    def _flush(self) -> None:
        assert self._proc is not None
        while self._outbox:
            try:
                sent = os.write(self._proc.fd, self._outbox)
            except BlockingIOError:
                break
            except OSError:
                self._outbox.clear()  # the program is gone
                break
            del self._outbox[:sent]
        if self._loop is None:
            return
        if self._outbox and not self._writing:
            self._loop.add_writer(self._proc.fd, self._flush)
            self._writing = True
        elif not self._outbox and self._writing:
            self._loop.remove_writer(self._proc.fd)
            self._writing = False

    def resize(self, lines: int, columns: int) -> None:
        """Resize the terminal: the emulator now, the program through the kernel (SIGWINCH)."""
        lines, columns = max(1, lines), max(1, columns)
        if (lines, columns) == (self.emulator.lines, self.emulator.columns):
            return
        self.emulator.resize(lines, columns)
        if self._proc is not None and not self.ended:
            with contextlib.suppress(OSError):
                self._proc.setwinsize(lines, columns)

    # --- end ----------------------------------------------------------------------------------

    async def close(self, grace_s: float = 1.0) -> None:
        """End the program's whole group: SIGHUP (a terminal closing), SIGTERM, SIGKILL; then reap it."""
        proc = self._proc
        if proc is None or self.ended:
            return
        for sig in (signal.SIGHUP, signal.SIGTERM):
            signal_group(proc.pid, sig)
            if await self._wait_dead(grace_s):
                break
        else:
            signal_group(proc.pid, signal.SIGKILL)
            await self._wait_dead(2.0)
        signal_group(proc.pid, signal.SIGKILL)  # what the program started and left in its group
        self._pause_reading()
        with self._ready:
            self._eof = True
            self._backlog.clear()
            self._ready.notify()
        if self._feeder is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._feeder
        await self._reap(wait_s=0)

    async def _wait_dead(self, seconds: float) -> bool:
        assert self._proc is not None
        deadline = time.monotonic() + seconds
        while True:
            if not self._alive():
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(_POLL_S)

    def _alive(self) -> bool:
        assert self._proc is not None
        try:
            return bool(self._proc.isalive())
        except Exception:  # ptyprocess raises when waitpid finds nothing: the program is reaped
            return False

    async def _reap(self, wait_s: float) -> None:
        """The program closed its terminal: collect its exit status and tell the owner, once."""
        if self.ended or self._proc is None:
            return
        proc = self._proc
        if not await self._wait_dead(wait_s):
            # it closed its terminal but lives on: it has no screen any more, end it
            for sig in (signal.SIGHUP, signal.SIGKILL):
                signal_group(proc.pid, sig)
                if await self._wait_dead(1.0):
                    break
        signal_group(proc.pid, signal.SIGKILL)
        self.ended = True
        self.ended_at = time.monotonic()
        status = proc.exitstatus
        self.exit_code = status if status is not None else (-proc.signalstatus if proc.signalstatus else None)
        if self._writing and self._loop is not None:
            self._loop.remove_writer(proc.fd)
            self._writing = False
        self._pause_reading()
        with contextlib.suppress(OSError):
            # through its file object: closing the bare fd left that object to close the same number again
            # when collected, by then perhaps another terminal's (whose program then never seemed to end)
            proc.fileobj.close()
        proc.closed = True
        LIVE_GROUPS.discard(proc.pid)
        _RUNNING.discard(self)
        if self.on_exit is not None:
            self.on_exit(self.exit_code)
