"""One turn per conversation across processes: the lease a process holds while it writes a reply.

Several tunaflow processes may work on one project (the app, ``tunaflow ask`` in another terminal,
``tunaflow run``). A turn in progress is a row of ``turn_leases``: the conversation, a random owner
token, a generation that grows with every new holder, and who holds it — host, boot id
(``/proc/sys/kernel/random/boot_id``), pid and the pid's start time (``/proc/<pid>/stat`` field
22) — with a heartbeat. A lease is taken in one ``BEGIN IMMEDIATE`` transaction when the row is
free or stale: on this host and boot, stale when the pid is gone or is another process now (its
start time differs); from another boot, always stale; from another host, stale once its heartbeat
is older than :data:`HEARTBEAT_TTL_S`. The holder renews it while the turn runs; the writes of the
turn's output check the token in the same transaction (:meth:`LeaseStore.fenced`), so a holder
that lost its lease — a laptop resumed after another process took over — writes nothing.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import peewee

from tunaflow_tui.core.processes import start_ticks
from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.models import MessageRow, TurnLeaseRow
from tunaflow_tui.core.storage.rows import Row
from tunaflow_tui.core.storage.storebase import StoreBase, all_rows, first_row

HEARTBEAT_INTERVAL_S = 2.0
"""How often the holder renews its lease while the turn runs."""
HEARTBEAT_TTL_S = 30.0
"""A lease held on another host is stale once its heartbeat is this old (its pid cannot be checked)."""

_BOOT_ID_PATH = Path("/proc/sys/kernel/random/boot_id")


def boot_id() -> str:
    """This machine's boot id ('' where the system does not say)."""
    try:
        return _BOOT_ID_PATH.read_text(encoding="ascii").strip()
    except OSError:
        return ""


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """The process that holds (or asks for) a lease: host, boot, pid and the pid's start time."""

    host: str
    boot_id: str
    pid: int
    pid_start: int | None

    @classmethod
    def this_process(cls) -> LeaseHolder:
        """The running process."""
        pid = os.getpid()
        return cls(socket.gethostname(), boot_id(), pid, start_ticks(pid))


@dataclass(frozen=True, slots=True)
class TurnLease:
    """A lease as stored: the conversation, its holder, the owner token and generation, the reply it writes."""

    conversation_id: str
    owner_token: str
    generation: int
    holder: LeaseHolder
    role: str
    message_id: int | None
    heartbeat_at: float

    def is_stale(self, *, now: float | None = None, here: LeaseHolder | None = None) -> bool:
        """Whether the holder is gone, so that another process may take the lease over."""
        here = here or LeaseHolder.this_process()
        if self.holder.host != here.host:
            return (now if now is not None else time.time()) - self.heartbeat_at > HEARTBEAT_TTL_S
        if self.holder.boot_id != here.boot_id:
            return True  # the machine restarted since: nothing of that boot runs any more
        ticks = start_ticks(self.holder.pid)
        if ticks is None:
            return not _pid_exists(self.holder.pid)
        return self.holder.pid_start is not None and ticks != self.holder.pid_start

    def describe(self) -> str:
        """``pid 4242`` (and the host, when it is another one)."""
        here = socket.gethostname()
        return f"pid {self.holder.pid}" + ("" if self.holder.host == here else f" on {self.holder.host}")


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class TurnInProgress(Exception):
    """Another live process holds the conversation's lease: its turn is still being written."""

    def __init__(self, lease: TurnLease, what: str) -> None:
        self.lease = lease
        super().__init__(f"{what} has a turn in progress ({lease.describe()}) — wait for it or cancel it")


class LeaseLost(Exception):
    """This process no longer holds the lease it wrote under: another took the conversation over."""


def conversation_name(conversation_id: str) -> str:
    """``main`` / ``branch 3``: a conversation as a user names it."""
    if conversation_id.startswith("branch:"):
        return f"branch {conversation_id.split(':', 1)[1]}"
    return conversation_id


def _lease(row: Row) -> TurnLease:
    holder = LeaseHolder(str(row["host"]), str(row["boot_id"]), int(row["pid"]), row["pid_start"])
    return TurnLease(str(row["conversation_id"]), str(row["owner_token"]), int(row["generation"]), holder,
                     str(row["role"]), row["message_id"], float(row["heartbeat_at"] or 0.0))


def live_conversations(db: peewee.Database) -> frozenset[str]:
    """The conversations whose lease a live process holds (read through ``db``)."""
    rows = all_rows(TurnLeaseRow.select().where(TurnLeaseRow.owner_token.is_null(False)), db)
    return frozenset(lease.conversation_id for lease in map(_lease, rows) if not lease.is_stale())


class LeaseStore(StoreBase):
    """Turn-lease methods of the store (see the module docstring)."""

    def acquire_lease(self, conversation_id: str, *, role: str = "",
                      holder: LeaseHolder | None = None) -> TurnLease:
        """Take the lease of ``conversation_id`` for this process; raise :class:`TurnInProgress` if it is live.

        Taking over a stale lease marks the reply its holder left ``streaming`` as ``interrupted``
        (its text is kept).
        """
        holder = holder or LeaseHolder.this_process()
        token = secrets.token_hex(16)
        beat = time.time()
        with self._db.writing() as db:  # BEGIN IMMEDIATE: no other process reads-then-writes in between
            row = first_row(TurnLeaseRow.select().where(TurnLeaseRow.conversation_id == conversation_id), db)
            if row is not None and row["owner_token"] is not None:
                current = _lease(row)
                if not current.is_stale():
                    raise TurnInProgress(current, conversation_name(conversation_id))
                if current.message_id is not None:
                    self._interrupt_left_reply(db, current.message_id)
            generation = (int(row["generation"]) if row is not None else 0) + 1
            values = {
                "owner_token": token, "generation": generation, "host": holder.host, "boot_id": holder.boot_id,
                "pid": holder.pid, "pid_start": holder.pid_start, "role": role, "message_id": None,
                "acquired_at": now_text(), "heartbeat_at": beat,
            }
            if row is None:
                TurnLeaseRow.insert(conversation_id=conversation_id, **values).execute(db)
            else:
                TurnLeaseRow.update(**values).where(TurnLeaseRow.conversation_id == conversation_id).execute(db)
        return TurnLease(conversation_id, token, generation, holder, role, None, beat)

    @staticmethod
    def _interrupt_left_reply(db: peewee.Database, message_id: int) -> None:
        MessageRow.update(status="interrupted", updated_at=now_text(),
                          error_message="the process that wrote it ended").where(
            (MessageRow.id == message_id) & (MessageRow.status == "streaming")).execute(db)

    def renew_lease(self, lease: TurnLease) -> bool:
        """The heartbeat: True while this process still holds ``lease``, False once it was lost."""
        with self._db.writing() as db:
            changed: int = TurnLeaseRow.update(heartbeat_at=time.time()).where(
                (TurnLeaseRow.conversation_id == lease.conversation_id)
                & (TurnLeaseRow.owner_token == lease.owner_token)).execute(db)
        return changed == 1

    def release_lease(self, lease: TurnLease) -> None:
        """Give the lease up (nothing happens if another process has taken it since)."""
        with self._db.writing() as db:
            TurnLeaseRow.update(owner_token=None, pid=None, pid_start=None, message_id=None).where(
                (TurnLeaseRow.conversation_id == lease.conversation_id)
                & (TurnLeaseRow.owner_token == lease.owner_token)).execute(db)

    def holds_lease(self, lease: TurnLease) -> bool:
        """Whether ``lease`` is still this process's (its token is the stored one)."""
        with self._db.reading() as db:
            row = first_row(TurnLeaseRow.select(TurnLeaseRow.owner_token).where(
                TurnLeaseRow.conversation_id == lease.conversation_id), db)
        return row is not None and row["owner_token"] == lease.owner_token

    @contextmanager
    def fenced(self, lease: TurnLease) -> Iterator[None]:
        """One transaction that writes only while ``lease`` is held; raise :class:`LeaseLost` otherwise.

        Writes of the store made inside the block join this transaction, so the token check and
        the write commit together.
        """
        with self._db.writing() as db:
            row = first_row(TurnLeaseRow.select(TurnLeaseRow.owner_token).where(
                TurnLeaseRow.conversation_id == lease.conversation_id), db)
            if row is None or row["owner_token"] != lease.owner_token:
                raise LeaseLost(f"the turn in {conversation_name(lease.conversation_id)} was taken over by "
                                "another process; this one writes nothing more")
            yield

    def attach_lease_message(self, lease: TurnLease, message_id: int) -> None:
        """Record which reply the holder writes (a process that takes a stale lease over ends it)."""
        with self.fenced(lease), self._db.writing() as db:
            TurnLeaseRow.update(message_id=message_id).where(
                TurnLeaseRow.conversation_id == lease.conversation_id).execute(db)

    def live_lease(self, conversation_id: str) -> TurnLease | None:
        """The lease of ``conversation_id`` if a live process holds it (a stale one counts as free)."""
        with self._db.reading() as db:
            row = first_row(TurnLeaseRow.select().where(
                (TurnLeaseRow.conversation_id == conversation_id) & TurnLeaseRow.owner_token.is_null(False)), db)
        if row is None:
            return None
        lease = _lease(row)
        return None if lease.is_stale() else lease

    def data_version(self) -> int:
        """A number that changes whenever another process commits to the database (poll it to follow them)."""
        return self._db.data_version()

    def live_leases(self) -> tuple[TurnLease, ...]:
        """Every lease a live process holds, by conversation."""
        with self._db.reading() as db:
            rows = all_rows(TurnLeaseRow.select().where(TurnLeaseRow.owner_token.is_null(False))
                            .order_by(TurnLeaseRow.conversation_id), db)
        return tuple(lease for lease in map(_lease, rows) if not lease.is_stale())
