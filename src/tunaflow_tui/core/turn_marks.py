"""Finding and ending every process an agent turn started, even those that left its process group.

An agent runs in a process group of its own, and ending the group ends whatever stayed in it. A
process that calls ``setsid`` (a daemonised helper, an MCP server, ``nohup … &`` from a shell tool)
leaves the group and its parent, so no group signal reaches it. What it keeps is the environment
it was started with: each turn sets ``TUNAFLOW_TURN=<uuid>`` in its agent's environment, every
descendant inherits it, and :func:`end_marked` finds the processes carrying that value in
``/proc/<pid>/environ`` and kills them (as Jenkins' process-tree killer does with its build
cookie). A process that starts a program with a cleared environment escapes this; nothing short of
a cgroup catches that.

Each process is signalled through a pidfd opened before its environment is read, so a pid reused
by an unrelated process between the two is never signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid

MARK_VARIABLE = "TUNAFLOW_TURN"
"""The environment variable that marks every process of one turn."""
_POLL_S = 0.01


def new_mark() -> str:
    """A fresh mark value for one turn."""
    return uuid.uuid4().hex


def _carries(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            environ = fh.read()
    except OSError:  # gone, a zombie, or not ours
        return False
    return needle in environ.split(b"\0")


def marked_pids(mark: str) -> list[int]:
    """Live processes (other than this one) whose environment carries ``TUNAFLOW_TURN=<mark>``."""
    needle = f"{MARK_VARIABLE}={mark}".encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    me = os.getpid()
    return [int(e) for e in entries if e.isdigit() and int(e) != me and _carries(int(e), needle)]


def _kill(pid: int, needle: bytes) -> None:
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        if _carries(pid, needle):  # still the marked process, now pinned by the pidfd
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(fd, signal.SIGKILL)
    finally:
        os.close(fd)


def end_marked(mark: str, timeout_s: float = 2.0) -> list[int]:
    """SIGKILL every process carrying ``mark`` until none is left (bounded); the pids still alive.

    Repeated because a marked process may fork while it is being looked for.
    """
    needle = f"{MARK_VARIABLE}={mark}".encode()
    deadline = time.monotonic() + timeout_s
    while True:
        pids = marked_pids(mark)
        if not pids or time.monotonic() >= deadline:
            return pids
        for pid in pids:
            _kill(pid, needle)
        time.sleep(_POLL_S)
