"""What went wrong with a project's database, in one line a person can act on.

The driver's own words hide the cause more often than not: after a full disk SQLite has already
rolled the transaction back, so the rollback that follows fails with "cannot rollback - no
transaction is active" and that is what surfaces; "attempt to write a readonly database" does not
say that the file system is mounted read-only; "database is locked" does not say by whom. This
module looks behind those: the error chain, the file system's flags, and the kernel's list of file
locks (``/proc/locks``) for the process that holds the write lock.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import peewee

_DRIVER_ERRORS = (peewee.PeeweeException, sqlite3.Error)
_WAL_WRITE_LOCK_BYTE = 120
"""The byte of the ``-shm`` file whose lock is SQLite's WAL write lock (``WALINDEX_LOCK_OFFSET``)."""


def root_failure(exc: BaseException) -> BaseException:
    """The database error that started ``exc``: a failed rollback is the echo of an earlier failure."""
    seen: set[int] = set()
    while "cannot rollback" in str(exc).lower() and id(exc) not in seen:
        seen.add(id(exc))
        earlier = exc.__cause__ or exc.__context__
        if not isinstance(earlier, _DRIVER_ERRORS):
            break
        exc = earlier
    return exc


def read_only_reason(database: Path) -> str | None:
    """Why ``database`` (or its folder) cannot be written, or None when it can.

    The file system's read-only flag holds for every user; the permission check only matters for
    an unprivileged one (root writes a file whatever its mode, and ``os.access`` says so).
    """
    try:
        flags = os.statvfs(database).f_flag
    except OSError:
        return None
    if flags & os.ST_RDONLY:
        return f"the file system holding {database.parent} is mounted read-only"
    if not os.access(database.parent, os.W_OK) or not os.access(database, os.W_OK):
        return f"{database.parent} or {database.name} is not writable by this user"
    return None


def lock_holder(database: Path) -> int | None:
    """The pid of another process holding the write lock of ``database``, when the kernel says which."""
    targets: dict[str, tuple[int, ...]] = {}
    for path, write_bytes in ((Path(f"{database}-shm"), (_WAL_WRITE_LOCK_BYTE,)), (database, ())):
        try:
            info = path.stat()
        except OSError:
            continue
        targets[f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"] = write_bytes
    try:
        lines = Path("/proc/locks").read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if "->" in fields:  # a process waiting for the lock, not holding it
            continue
        if len(fields) < 8 or fields[3] != "WRITE" or fields[5] not in targets or not fields[4].isdigit():
            continue
        pid, start = int(fields[4]), fields[6]
        wanted = targets[fields[5]]
        if pid != os.getpid() and pid > 0 and (not wanted or (start.isdigit() and int(start) in wanted)):
            return pid
    return None


def _process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def describe_failure(exc: BaseException, database: Path | None = None) -> str:
    """A human explanation of a database failure (``database``: the file, to look for its cause)."""
    exc = root_failure(exc)
    text = str(exc).lower()
    if "disk is full" in text or "database or disk is full" in text:
        return "The disk is full: tunaflow could not save your data. Free some space and try again."
    if "readonly" in text or "read-only" in text or "read only" in text:
        reason = read_only_reason(database) if database is not None else None
        return (f"The tunaflow database is read-only ({reason}): nothing was changed." if reason else
                "The tunaflow database is read-only: check the permissions of .tunaflow/state.db.")
    if "locked" in text or "busy" in text:
        pid = lock_holder(database) if database is not None else None
        if pid is not None:
            name = _process_name(pid)
            return (f"The tunaflow database is locked by process {pid}{f' ({name})' if name else ''}, which is "
                    "writing to it; try again when it is done.")
        return "The tunaflow database is busy in another process; try again in a moment."
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return "The tunaflow database file is damaged (.tunaflow/state.db)."
    if "constraint" in text:
        return f"The change was refused by the database: {exc}"
    if "unable to open" in text:
        return "tunaflow could not open its database file (.tunaflow/state.db)."
    return f"A database error occurred: {exc}"
