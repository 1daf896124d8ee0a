"""Which process owns a project: the first to open it, until it closes (or dies).

Several processes may open one project: the app, ``tunaflow status`` in a tmux status bar every
few seconds, ``tunaflow export``, a second terminal. Only the owner may treat what it finds
half-done as left behind by a crash (a message still ``streaming``, an agent step never
finished): for anyone else, that work belongs to a live process. Ownership is an advisory
``flock`` on ``.tunaflow/owner.lock``, released by the system when the owner exits however it
exits, so a crashed owner never blocks the next one.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # no flock here: every process behaves as the owner, as before ownership existed
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "owner.lock"


class Ownership:
    """The owner lock of one project, held while this object is open (see the module docstring)."""

    def __init__(self, state_dir: Path) -> None:
        self._fd: int | None = None
        self.owner = True
        if fcntl is None:
            return
        try:
            fd = os.open(state_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return  # an unwritable folder: behave as before (the owner)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            self.owner = False
            return
        self._fd = fd

    @classmethod
    def declined(cls) -> Ownership:
        """An ownership never taken: the process is not the owner and holds no lock."""
        ownership = cls.__new__(cls)
        ownership._fd = None
        ownership.owner = False
        return ownership

    def release(self) -> None:
        """Give ownership up (the next process to open the project takes it)."""
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None
