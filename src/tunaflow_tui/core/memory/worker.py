"""The embedding worker: a process of its own that holds the model, so the app's process never does.

Run as ``python -m tunaflow_tui.core.memory.worker STATE_DIR [--idle SECONDS]``; clients start it
on demand (:mod:`.worker_client`). One worker serves one project's state folder: an advisory
``flock`` on ``STATE_DIR/embed.lock`` keeps a second one from starting, and the socket
(:func:`~.worker_protocol.socket_path`) is only bound by the process holding it. The app and the
shell commands of that project share it.

Requests (JSON headers, see :mod:`.worker_protocol`):

- ``hello``: the worker's pid;
- ``load``: load the model now; the answer carries ``kind``/``reason``/``hint`` when it cannot;
- ``embed`` with ``texts``: one float32 row per text in the payload;
- ``backfill`` with ``project``: embed every finished message of that project still without chunks,
  on a thread of the worker, so a short command can hand its new messages over and exit;
- ``progress`` with ``project``: how far that backfill is;
- ``nearest`` with ``project`` and ``k``, the query vector as payload: the ``k`` chunks most like it
  (``hits``: chunk id and cosine), from that project's vector index, which the worker reads on first
  use from the saved vector file (:mod:`.vector_file`; from the database when the file is missing
  or stale, 0.35–1.5 s per 100,000 chunks, then saves it) and brings up to date at each request
  (the chunks stored since), so the 154 MB of a 100,000-chunk index live here, not in the app.

The worker leaves after ``--idle`` seconds without a request or a backfill running, telling each
open connection ``bye`` first, so the model's 230–280 MB go back to the system.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tunaflow_tui.core.memory.model_files import MODEL_ID, EmbeddingUnavailable
from tunaflow_tui.core.memory.worker_protocol import (
    LOCK_NAME,
    ProtocolError,
    receive_frame,
    send_frame,
    socket_path,
)
from tunaflow_tui.core.storage.storage_errors import StorageError

try:
    import fcntl
except ImportError:  # pragma: no cover - tunaflow runs on Linux and macOS
    fcntl = None  # type: ignore[assignment]

#: Seconds without a request after which the worker leaves (the default of ``[memory] worker_idle_seconds``).
DEFAULT_IDLE_SECONDS = 30.0
#: How long a new worker waits for a leaving one to let go of the lock.
LOCK_WAIT_SECONDS = 5.0
#: How often the accept loop looks at the idle clock.
_TICK_SECONDS = 0.2


@dataclass
class _Backfill:
    """The state of one project's backfill inside the worker."""

    wanted: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    embedded: int = 0
    total: int = 0
    running: bool = False
    unavailable: str | None = None
    error: str | None = None


class _ProjectVectors:
    """One project's chunk vectors in memory: from the saved vector file when it is current, else from
    the database (then saved for the next worker), and after that only the chunks stored since."""

    def __init__(self, project: Path) -> None:
        self._project = project
        self._lock = threading.Lock()
        self._store: Any = None
        self._index: Any = None
        self._last_id = 0
        self._unsaved = False

    @property
    def _file(self) -> Path:
        from tunaflow_tui.core.memory.vector_file import FILE_NAME

        return self._project / ".tunaflow" / FILE_NAME

    def _read_all(self, store: Any) -> Iterator[tuple[int, bytes]]:
        for chunk_id, blob in store.chunk_vectors(MODEL_ID):
            self._last_id = chunk_id  # ascending ids
            yield chunk_id, blob

    def _load(self, store: Any) -> Any:
        from tunaflow_tui.core.memory.model_files import EMBEDDING_DIM
        from tunaflow_tui.core.memory.vector_file import load_vectors
        from tunaflow_tui.core.memory.vectors import VectorIndex

        saved = load_vectors(self._file, MODEL_ID, EMBEDDING_DIM, self._count_up_to(store))
        if saved is not None:
            self._last_id = saved.max_id
            return VectorIndex.from_normalised(saved.ids, saved.matrix)
        self._last_id = 0
        self._unsaved = True
        return VectorIndex.from_blobs(self._read_all(store))

    @staticmethod
    def _count_up_to(store: Any) -> Callable[[int], int]:
        return lambda top: int(store.chunk_count(MODEL_ID, up_to_id=top))

    def _current(self) -> tuple[Any, Any]:
        """The open store and the index with every chunk stored so far (call with the lock held)."""
        from tunaflow_tui.core.storage import Store

        if self._store is None:  # kept open: a search must not pay for opening the database
            self._store = Store.open(self._project, claim_ownership=False)
        store = self._store
        if self._index is None:
            self._index = self._load(store)
        for chunk_id, blob in store.chunk_vectors(MODEL_ID, after_id=self._last_id):
            self._index.add_blob(chunk_id, blob)
            self._last_id = chunk_id
            self._unsaved = True
        return store, self._index

    def _save(self) -> None:
        """Write the index to the vector file if it holds chunks the file lacks (call with the lock held)."""
        from tunaflow_tui.core.memory.vector_file import save_vectors

        if not self._unsaved or self._index is None or not self._file.parent.is_dir():
            return
        ids, matrix = self._index.snapshot()
        with contextlib.suppress(OSError):  # only a copy: the next worker reads the database instead
            save_vectors(self._file, MODEL_ID, ids, matrix, self._count_up_to(self._store))
            self._unsaved = False

    def save(self) -> None:
        """Save the chunks added since the file was written (the worker does it as it leaves)."""
        with self._lock:
            self._save()

    def warm(self) -> None:
        """Read the index now (at the worker's start, beside the model's load), for the first search;
        then save it if the vector file lacked some of it."""
        with self._lock:
            self._current()
            self._save()

    def nearest(self, payload: bytes, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunks nearest the query vector in ``payload`` (384 float32), that still exist."""
        from tunaflow_tui.core.memory.vectors import blob_to_vector

        query = blob_to_vector(payload)
        with self._lock:
            store, _index = self._current()
            hits = self._index.top_k(query, max(0, min(k, 10_000)))
            where = store.chunk_locations([hit.id for hit in hits])
            for hit in hits:
                if hit.id not in where:  # an edited or deleted message's old chunk
                    self._index.remove(hit.id)
        return [(hit.id, hit.score) for hit in hits if hit.id in where]


class EmbeddingWorker:
    """Serves embedding requests on a Unix socket until idle; see the module docstring."""

    def __init__(self, state_dir: Path, *, idle_seconds: float = DEFAULT_IDLE_SECONDS) -> None:
        from tunaflow_tui.core.memory.embedder import Embedder

        self.state_dir = state_dir
        self.idle_seconds = idle_seconds
        self.embedder = Embedder()
        self._lock = threading.Lock()
        self._last_activity = time.monotonic()
        self._busy = 0
        self._closing = False
        self._connections: set[socket.socket] = set()
        self._backfills: dict[str, _Backfill] = {}
        self._indexes: dict[str, _ProjectVectors] = {}

    # ------------------------------------------------------------------ lifetime
    def _touch(self, delta: int = 0) -> None:
        with self._lock:
            self._busy += delta
            self._last_activity = time.monotonic()

    def _idle(self) -> bool:
        with self._lock:
            if self._busy or any(backfill.running or backfill.wanted.is_set()
                                 for backfill in self._backfills.values()):
                self._last_activity = time.monotonic()
                return False
            if time.monotonic() - self._last_activity < self.idle_seconds:
                return False
            self._closing = True
            return True

    def serve(self, listener: socket.socket) -> None:
        """Accept connections until idle, then say ``bye`` to each open one and return."""
        threading.Thread(target=self._preload, name="tunaflow-embed-load", daemon=True).start()
        listener.settimeout(_TICK_SECONDS)
        while not self._idle():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(None)
            with self._lock:
                self._connections.add(conn)
            threading.Thread(target=self._serve_connection, args=(conn,), name="tunaflow-embed-conn",
                             daemon=True).start()
        with self._lock:
            connections = list(self._connections)
            indexes = list(self._indexes.values())
        for vectors in indexes:  # the next worker then starts from the file, not from the database
            vectors.save()
        for conn in connections:
            with contextlib.suppress(OSError):
                send_frame(conn, {"ok": False, "bye": True})

    def _preload(self) -> None:
        # A worker is started because something is about to be embedded or searched: load the model
        # at once, and the project's vectors beside it (the first search after the worker was idle
        # waits for both; on two cores they load side by side).
        project = self.state_dir.parent
        if (self.state_dir / "state.db").is_file():
            threading.Thread(target=self._preload_vectors, args=(str(project),), name="tunaflow-embed-index",
                             daemon=True).start()
        with contextlib.suppress(EmbeddingUnavailable):
            self.embedder.load()

    def _preload_vectors(self, project: str) -> None:
        self._touch(+1)  # not idle while reading
        try:
            with contextlib.suppress(Exception):  # the first search reads it again and reports what fails
                self._vectors(project).warm()
        finally:
            self._touch(-1)

    # ------------------------------------------------------------------ requests
    def _serve_connection(self, conn: socket.socket) -> None:
        try:
            while True:
                try:
                    frame = receive_frame(conn)
                except (OSError, ProtocolError):
                    return
                if frame is None:
                    return
                self._touch(+1)
                try:
                    with self._lock:
                        closing = self._closing
                    if closing:
                        send_frame(conn, {"ok": False, "bye": True})
                        return
                    header, payload = self._answer(*frame)
                    send_frame(conn, header, payload)
                except OSError:
                    return
                finally:
                    self._touch(-1)
        finally:
            with self._lock:
                self._connections.discard(conn)
            conn.close()

    def _answer(self, header: dict[str, Any], _payload: bytes) -> tuple[dict[str, Any], bytes]:
        op = header.get("op")
        try:
            if op == "hello":
                return {"ok": True, "pid": os.getpid()}, b""
            if op == "load":
                self.embedder.load()
                return {"ok": True}, b""
            if op == "embed":
                texts = header.get("texts")
                if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
                    return {"ok": False, "error": "embed needs a list of texts"}, b""
                vectors = self.embedder.embed(texts)
                return {"ok": True, "rows": len(texts)}, vectors.astype("<f4").tobytes()
            if op in ("backfill", "progress"):
                project = header.get("project")
                if not isinstance(project, str) or not Path(project).is_dir():
                    return {"ok": False, "error": "no such project folder"}, b""
                backfill = self._backfill(project, start=op == "backfill")
                return {"ok": True, "embedded": backfill.embedded, "total": backfill.total,
                        "running": backfill.running or backfill.wanted.is_set(),
                        "unavailable": backfill.unavailable, "error": backfill.error}, b""
            if op == "nearest":
                project, k = header.get("project"), header.get("k")
                if not isinstance(project, str) or not Path(project).is_dir() or not isinstance(k, int):
                    return {"ok": False, "error": "nearest needs a project folder and k"}, b""
                return {"ok": True, "hits": self._vectors(project).nearest(_payload, k)}, b""
        except EmbeddingUnavailable as error:
            return {"ok": False, "kind": str(error.kind), "reason": error.reason, "hint": error.hint}, b""
        except (StorageError, ValueError) as exc:
            return {"ok": False, "error": str(exc)}, b""
        return {"ok": False, "error": f"unknown request {op!r}"}, b""

    def _vectors(self, project: str) -> _ProjectVectors:
        with self._lock:
            vectors = self._indexes.get(project)
            if vectors is None:
                vectors = self._indexes[project] = _ProjectVectors(Path(project))
        return vectors

    # ------------------------------------------------------------------ backfill
    def _backfill(self, project: str, *, start: bool) -> _Backfill:
        with self._lock:
            backfill = self._backfills.setdefault(project, _Backfill())
            if start:
                backfill.wanted.set()
                if backfill.thread is None or not backfill.thread.is_alive():
                    backfill.thread = threading.Thread(target=self._run_backfill, args=(project, backfill),
                                                       name="tunaflow-embed-backfill", daemon=True)
                    backfill.thread.start()
        return backfill

    def _run_backfill(self, project: str, backfill: _Backfill) -> None:
        from tunaflow_tui.core.memory.indexer import WORKER_NICENESS, EmbeddingIndexer, IndexerState
        from tunaflow_tui.core.storage import StorageError, Store

        def progress(state: IndexerState) -> None:
            backfill.embedded, backfill.total = state.embedded, state.total
            backfill.unavailable = state.unavailable

        with contextlib.suppress(OSError, AttributeError):  # a backfill yields to searches and to the app
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICENESS)
        while backfill.wanted.is_set():
            backfill.running = True
            backfill.wanted.clear()
            try:
                # Not the project's owner: the app or a command that opens it later must be.
                with Store.open(Path(project), claim_ownership=False) as store:
                    EmbeddingIndexer(store, self.embedder, on_progress=progress, model_id=MODEL_ID).run_pass()
                backfill.error = None
            except StorageError as exc:
                backfill.error = str(exc)
            except EmbeddingUnavailable as error:
                backfill.unavailable = error.reason
            finally:
                backfill.running = False
                self._touch()


def _take_lock(state_dir: Path, sock_path: Path) -> int | None:
    """The lock's descriptor, or None when another worker holds it and answers."""
    fd = os.open(state_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    if fcntl is None:  # pragma: no cover
        return fd
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            pass
        # Held: by a live worker (then leave it the work), or by one that is leaving (then wait).
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(sock_path))
            os.close(fd)
            return None
        except OSError:
            pass
        finally:
            probe.close()
        if time.monotonic() > deadline:
            os.close(fd)
            return None
        time.sleep(0.05)


def run_worker(state_dir: Path, idle_seconds: float) -> int:
    """Take the lock, bind the socket, serve until idle; 0 also when another worker already serves."""
    state_dir = state_dir.resolve()
    sock_path = socket_path(state_dir)
    sock_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = _take_lock(state_dir, sock_path)
    if fd is None:
        return 0
    try:
        with contextlib.suppress(FileNotFoundError):
            sock_path.unlink()  # left by a worker that was killed: the lock says nobody serves it
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)  # only this user may connect
        try:
            listener.bind(str(sock_path))
        finally:
            os.umask(old_umask)
        listener.listen(16)
        try:
            EmbeddingWorker(state_dir, idle_seconds=idle_seconds).serve(listener)
        finally:
            listener.close()
            with contextlib.suppress(FileNotFoundError):
                sock_path.unlink()
    finally:
        os.close(fd)  # releases the lock, after the socket is gone
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: ``STATE_DIR [--idle SECONDS]``."""
    parser = argparse.ArgumentParser(prog="python -m tunaflow_tui.core.memory.worker")
    parser.add_argument("state_dir", type=Path)
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE_SECONDS)
    args = parser.parse_args(argv)
    if not args.state_dir.is_dir():
        print(f"embedding worker: {args.state_dir} is not a folder", file=sys.stderr)
        return 2
    return run_worker(args.state_dir, max(0.1, args.idle))


if __name__ == "__main__":
    sys.exit(main())
