"""The project store: one SQLite database per project in ``<project>/.tunaflow/state.db``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from tunaflow_tui.core.storage.access import DatabaseAccess, translated_errors
from tunaflow_tui.core.storage.branches import BranchStore
from tunaflow_tui.core.storage.chunk_store import ChunkStore
from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.conversations import ConversationStore
from tunaflow_tui.core.storage.deliveries import DeliveryStore
from tunaflow_tui.core.storage.failures import read_only_reason
from tunaflow_tui.core.storage.gitexclude import exclude_from_git
from tunaflow_tui.core.storage.leases import LeaseStore, live_conversations
from tunaflow_tui.core.storage.memos import MemoStore
from tunaflow_tui.core.storage.message_parse import parse_message
from tunaflow_tui.core.storage.models import MessageRow, ProjectRow
from tunaflow_tui.core.storage.ownership import Ownership
from tunaflow_tui.core.storage.plans import PlanStore
from tunaflow_tui.core.storage.process_records import ProcessStore
from tunaflow_tui.core.storage.records import ProjectRecord
from tunaflow_tui.core.storage.roundtables import RoundtableStore
from tunaflow_tui.core.storage.rows import project_record
from tunaflow_tui.core.storage.schema import MIGRATIONS, prepare_schema, schema_version
from tunaflow_tui.core.storage.storage_errors import StorageError
from tunaflow_tui.core.storage.storebase import all_rows, first_row
from tunaflow_tui.core.storage.summaries import SummaryStore

STATE_DIR_NAME = ".tunaflow"
DATABASE_NAME = "state.db"


def database_path(project_dir: Path) -> Path:
    """Where the database of ``project_dir`` lives."""
    return project_dir / STATE_DIR_NAME / DATABASE_NAME


class Store(ConversationStore, BranchStore, PlanStore, MemoStore, ProcessStore, ChunkStore,
            SummaryStore, RoundtableStore, DeliveryStore, LeaseStore):
    """Everything tunaflow persists for one project; safe to call from several threads.

    Every writing method is one transaction; reads return immutable records. Use :meth:`open`.
    """

    def __init__(self, access: DatabaseAccess, project: ProjectRecord, recovered: tuple[int, ...],
                 ownership: Ownership | None = None) -> None:
        self._db = access
        self._project = project
        self._project_id = project.id
        self._recovered = recovered
        self._ownership = ownership

    @classmethod
    def open(cls, project_dir: Path, *, claim_ownership: bool = True) -> Store:
        """Open (creating and migrating if needed) the store of ``project_dir``.

        The first process to open a project owns it until it closes (:attr:`is_owner`, see
        :mod:`~tunaflow_tui.core.storage.ownership`). The owner marks messages left ``streaming``
        by a crashed run ``interrupted``, keeping their text (their ids are in
        :attr:`recovered_message_ids`); any other process leaves them to the live one that writes
        them. A project whose database cannot be written is opened to be read only (:attr:`read_only`
        says why; every write raises :class:`StorageError`). Raises :class:`StorageError` if the
        database cannot be created, opened or written.
        A helper process (the embedding worker) passes ``claim_ownership=False``: it never owns the
        project, so it never keeps ownership from the app or a command opened after it.
        """
        project_dir = Path(project_dir).resolve()
        if not project_dir.is_dir():
            raise StorageError(f"The project directory {project_dir} does not exist.")
        if database_path(project_dir).is_file():
            read_only = read_only_reason(database_path(project_dir))
            if read_only is not None:
                return cls._open_read_only(project_dir, read_only)
        try:
            (project_dir / STATE_DIR_NAME).mkdir(exist_ok=True)
        except OSError as exc:
            raise StorageError(f"tunaflow could not create {project_dir / STATE_DIR_NAME}: {exc.strerror}") from exc
        exclude_from_git(project_dir)
        ownership = Ownership(project_dir / STATE_DIR_NAME) if claim_ownership else Ownership.declined()
        access = DatabaseAccess(database_path(project_dir))
        try:
            conn = access.connect()
            with translated_errors(access.path):
                prepare_schema(conn)
            project = cls._ensure_project(access, project_dir)
            recovered = cls._recover_streaming(access) if ownership.owner else ()
        except BaseException:
            access.close()
            ownership.release()
            raise
        return cls(access, project, recovered, ownership)

    @classmethod
    def _open_read_only(cls, project_dir: Path, reason: str) -> Store:
        """Open a project that cannot be written: read as it is, nothing recovered or migrated."""
        access = DatabaseAccess(database_path(project_dir), read_only=reason)
        try:
            with access.reading() as db:
                version = schema_version(db.connection())  # type: ignore[no-untyped-call]
                row = first_row(ProjectRow.select().order_by(ProjectRow.id), db) if version else None
            if version != MIGRATIONS[-1].version or row is None:
                raise StorageError(f"The project is read-only ({reason}) and its database was written by another "
                                   f"tunaflow version (schema {version}, this one reads {MIGRATIONS[-1].version}); "
                                   "open it once where it can be written.")
        except BaseException:
            access.close()
            raise
        return cls(access, project_record(row), ())

    @property
    def read_only(self) -> str | None:
        """Why this project cannot be written (it was opened to be read only), or None."""
        return self._db.read_only

    @staticmethod
    def _ensure_project(access: DatabaseAccess, project_dir: Path) -> ProjectRecord:
        with access.reading() as db:
            row = first_row(ProjectRow.select().order_by(ProjectRow.id), db)
        if row is not None and row["path"] == str(project_dir):
            return project_record(row)
        with access.writing() as db:
            row = first_row(ProjectRow.select().order_by(ProjectRow.id), db)
            if row is None:
                ProjectRow.insert(path=str(project_dir), name=project_dir.name, created_at=now_text()).execute(db)
            elif row["path"] != str(project_dir):
                # The directory was moved or renamed: the database travels with it.
                ProjectRow.update(path=str(project_dir), name=project_dir.name).where(
                    ProjectRow.id == row["id"]
                ).execute(db)
            row = first_row(ProjectRow.select().order_by(ProjectRow.id), db)
        assert row is not None
        return project_record(row)

    @staticmethod
    def _recover_streaming(access: DatabaseAccess) -> tuple[int, ...]:
        with access.reading() as db:
            if first_row(MessageRow.select(MessageRow.id).where(MessageRow.status == "streaming"), db) is None:
                return ()
        with access.writing() as db:
            live = live_conversations(db)  # a reply another live process is writing is not left behind
            rows = all_rows(
                MessageRow.select(MessageRow.id, MessageRow.role, MessageRow.persona, MessageRow.content)
                .where((MessageRow.status == "streaming") & MessageRow.conversation_id.not_in(live))
                .order_by(MessageRow.id),
                db,
            )
            stamp = now_text()
            for row in rows:  # the partial text is final now: parse it once, like any finished message
                MessageRow.update(
                    status="interrupted", updated_at=stamp,
                    parsed=parse_message(row["role"], row["persona"], row["content"]),
                ).where(MessageRow.id == row["id"]).execute(db)
        return tuple(int(row["id"]) for row in rows)

    @property
    def project(self) -> ProjectRecord:
        """The project this store belongs to."""
        return self._project

    @property
    def path(self) -> Path:
        """The database file."""
        return self._db.path

    @property
    def is_owner(self) -> bool:
        """True unless another live process opened the project first (then its half-done work is live)."""
        return self._ownership is None or self._ownership.owner

    @property
    def recovered_message_ids(self) -> tuple[int, ...]:
        """Messages found ``streaming`` at open (a crashed run) and marked ``interrupted``."""
        return self._recovered

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group writes atomically: all commit together or, on an exception, none do.

        Other threads' writes wait until the group ends; nesting is allowed (inner groups are savepoints).
        """
        with self._db.writing():
            yield

    def close(self) -> None:
        """Close every connection (and give up ownership); further calls raise :class:`StorageError`."""
        self._db.close()
        if self._ownership is not None:
            self._ownership.release()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
