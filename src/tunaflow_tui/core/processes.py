"""Process groups tunaflow starts (agents, the project's tests): who they are, whether they live, ending them.

Every agent and every test run is started in its own session, so that it and whatever it starts
form one process group that can be ended as a whole, and so that a ctrl+c in the terminal does not
reach it behind tunaflow's back. The price is that nothing ends them when tunaflow itself ends:

* :data:`LIVE_GROUPS` lists the groups this process started and has not yet seen end, so that a
  signal handler can end them all (:meth:`ProcessGroups.terminate_all`);
* :class:`ProcessIdentity` is what is written to the database about a running group, so that the
  next tunaflow — after a ``kill -9`` — can tell whether that group still runs
  (:func:`group_alive`) and end it (:func:`end_group`). The start time of the group's leader
  (``/proc/<pid>/stat``, field 22) tells a live leader from a new process that reuses its pid.

Signals are sent to the group (``killpg``); SIGTERM first, SIGKILL for what is left after a grace
period, since an agent may ignore SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_GRACE_S = 2.0
"""How long a group gets to end after SIGTERM before it gets SIGKILL."""
_POLL_S = 0.02


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    """A process group as recorded: its leader's pid, the group id and the leader's start time.

    ``start_ticks`` is None where the system does not say (no ``/proc``).
    """

    pid: int
    pgid: int
    start_ticks: int | None = None


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (field 3 onwards), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    # the command name is in parentheses and may itself contain spaces and parentheses
    _head, _sep, rest = raw.rpartition(b")")
    return rest.decode("ascii", errors="replace").split()


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot; None if it does not exist or nobody says."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 20:
        return None
    try:
        return int(fields[19])  # field 22 overall: starttime
    except ValueError:
        return None


def _is_zombie(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and bool(fields) and fields[0] == "Z"


def identify(pid: int) -> ProcessIdentity:
    """The identity of the group led by ``pid`` (a process started with its own session)."""
    try:
        pgid = os.getpgid(pid)
    except OSError:
        pgid = pid
    return ProcessIdentity(pid, pgid, start_ticks(pid))


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, it is just not ours to signal
    return True


def group_alive(identity: ProcessIdentity) -> bool:
    """Whether the recorded group still runs (any member of it, not a later process reusing the pid).

    A pid cannot be given to a new process while it still names a live process group, so: the
    leader with the recorded start time means alive; another process under that pid means the
    group ended long ago; no leader at all means alive exactly when members of the group remain.
    """
    if identity.pgid <= 1:
        return False
    ticks = start_ticks(identity.pid)
    if ticks is not None and identity.start_ticks is not None and ticks != identity.start_ticks:
        return False  # the pid belongs to a new process now
    if ticks is not None and not _is_zombie(identity.pid):
        return True
    return _group_exists(identity.pgid) and not _only_zombies(identity.pgid)


def _only_zombies(pgid: int) -> bool:
    """True when every process of the group is a zombie waiting to be reaped (it has ended)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return False
    members = 0
    for entry in entries:
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields is None or len(fields) < 3 or fields[2] != str(pgid):
            continue
        members += 1
        if fields[0] != "Z":
            return False
    return members > 0


def signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to the group; False when it is gone (or not ours)."""
    if pgid <= 1:
        return False
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def end_group(identity: ProcessIdentity, grace_s: float = DEFAULT_GRACE_S) -> bool:
    """End a recorded group: SIGTERM, then SIGKILL after ``grace_s``; True once it is gone.

    Does nothing to a group that is no longer the recorded one (see :func:`group_alive`).
    """
    if not group_alive(identity):
        return True
    signal_group(identity.pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not group_alive(identity):
            return True
        time.sleep(_POLL_S)
    signal_group(identity.pgid, signal.SIGKILL)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        if not group_alive(identity):
            return True
        time.sleep(_POLL_S)
    return not group_alive(identity)


class ProcessGroups:
    """The process groups this process started and has not yet seen end (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: dict[int, ProcessIdentity] = {}

    def add(self, identity: ProcessIdentity) -> None:
        """Remember a group that was just started."""
        with self._lock:
            self._groups[identity.pgid] = identity

    def discard(self, pgid: int) -> None:
        """Forget a group that has ended."""
        with self._lock:
            self._groups.pop(pgid, None)

    def snapshot(self) -> tuple[ProcessIdentity, ...]:
        """The groups still listed."""
        with self._lock:
            return tuple(self._groups.values())

    def terminate_all(self, grace_s: float = DEFAULT_GRACE_S) -> None:
        """End every listed group: SIGTERM to all at once, SIGKILL to what is left after ``grace_s``.

        For a signal handler or an exit path: blocks at most about ``grace_s`` plus two seconds.
        """
        groups = self.snapshot()
        for identity in groups:
            signal_group(identity.pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(group_alive(g) for g in groups):
            time.sleep(_POLL_S)
        for identity in groups:
            if group_alive(identity):
                signal_group(identity.pgid, signal.SIGKILL)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and any(group_alive(g) for g in groups):
            time.sleep(_POLL_S)
        for identity in groups:
            if not group_alive(identity):
                self.discard(identity.pgid)

    def kill_all(self) -> None:
        """SIGKILL every listed group at once (a second interrupt: no more waiting)."""
        for identity in self.snapshot():
            with contextlib.suppress(OSError):
                signal_group(identity.pgid, signal.SIGKILL)


LIVE_GROUPS = ProcessGroups()
"""The groups started by this process (agents, test runs) that have not ended yet."""
