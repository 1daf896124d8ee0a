"""The client side of the embedding worker: an embedder whose model lives in another process.

:class:`WorkerEmbedder` has the methods of :class:`~tunaflow_tui.core.memory.embedder.Embedder`
that the indexer, project search and roundtable recall use (``available``, ``load``, ``embed``,
``embed_one``, ``loaded``, ``error``, ``status``), so they work unchanged while onnxruntime,
tokenizers and the model stay out of the calling process. It connects to the project's worker
(:mod:`.worker`), starting one with the same interpreter when none answers; a lock in the
worker makes sure two clients starting one at once end up sharing a single worker.

A worker that left because it was idle is started again without a word. One that died (killed,
crashed) mid-request is started again too, the request is asked again, and ``on_lost`` is called
once per loss, so the caller can say that search is full text until the worker is back. When the
worker cannot be started at all, :class:`WorkerLost` (an :class:`EmbeddingUnavailable` marked
``transient``) is raised: try again later.

Importing this module imports neither numpy nor onnxruntime; numpy is imported to decode vectors.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tunaflow_tui.core.memory.model_files import (
    EMBEDDING_DIM,
    EmbeddingUnavailable,
    ModelStatus,
    Unavailability,
    quick_status,
)
from tunaflow_tui.core.memory.worker_protocol import (
    LOG_NAME,
    ProtocolError,
    receive_frame,
    send_frame,
    socket_path,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: Seconds a client waits for a worker it started to answer (Python start-up and imports on a busy machine).
START_TIMEOUT_SECONDS = 30.0
#: Connections one client keeps open (the indexer and a search may ask at the same time).
MAX_CONNECTIONS = 4
#: Attempts at one request before the worker is given up for now.
ATTEMPTS = 3
#: Longest wait for one answer (a first search at 100,000 chunks reads the index: seconds, not minutes).
ANSWER_TIMEOUT_SECONDS = 300.0


class WorkerLost(EmbeddingUnavailable):
    """The embedding worker could not be reached or started; transient: a later request may work."""

    transient = True

    def __init__(self, reason: str) -> None:
        super().__init__(Unavailability.LOAD_FAILED, reason, "it is started again on the next request")


class _IdleExit(Exception):
    """The worker answered ``bye``: it left because it was idle."""


class WorkerEmbedder:
    """Embeds through the project's embedding worker process (thread-safe); see the module docstring."""

    def __init__(self, state_dir: Path, *, idle_seconds: float = 30.0, env: Mapping[str, str] | None = None,
                 on_lost: Callable[[str], None] | None = None,
                 start_timeout: float = START_TIMEOUT_SECONDS) -> None:
        self.state_dir = Path(state_dir)
        self.idle_seconds = idle_seconds
        self.on_lost = on_lost
        self._env = env
        self._start_timeout = start_timeout
        self._lock = threading.Lock()
        self._idle_connections: list[socket.socket] = []
        self._loaded = False
        self._error: EmbeddingUnavailable | None = None
        self._lost_told = False
        self._children: list[subprocess.Popen[bytes]] = []
        self.starts = 0
        """How many workers this client started (tests, benchmarks)."""
        self.load_seconds: float | None = None
        self.location = None

    # ------------------------------------------------------------------ the Embedder's face
    @property
    def loaded(self) -> bool:
        """Whether a worker has the model loaded for this client now (cheap: one ``stat``).

        False again once the worker has left (idle): retrieval for a turn then uses full text rather
        than wait for a new worker, as before the model's first load; the next embedding starts one.
        """
        return self._loaded and socket_path(self.state_dir.resolve()).exists()

    @property
    def error(self) -> EmbeddingUnavailable | None:
        """Why the worker cannot embed (no model, broken runtime), once it said so; None otherwise."""
        return self._error

    def available(self) -> bool:
        """Whether embedding can be expected to work, without starting a worker (cheap)."""
        if self._loaded:
            return True
        if self._error is not None:
            return False
        return quick_status(self._env).available

    def status(self) -> ModelStatus:
        """Like :meth:`available`, with the sentence that explains it."""
        if self._error is not None:
            return ModelStatus.failed(self._error, None)
        if self._loaded:
            return ModelStatus(True, "loaded in the embedding worker", None, verified=True)
        return quick_status(self._env)

    def load(self) -> None:
        """Have the worker load the model (starting the worker if needed); raises :class:`EmbeddingUnavailable`."""
        if self._error is not None:
            raise self._error
        if self._loaded:
            return
        status = quick_status(self._env)
        if not status.available:  # no model here: no worker to start
            self._error = EmbeddingUnavailable(status.kind or Unavailability.LOAD_FAILED, status.detail, status.hint)
            raise self._error
        started = time.perf_counter()
        self._request({"op": "load"})
        self.load_seconds = time.perf_counter() - started
        self._loaded = True

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit-length row per text, shape ``(len(texts), 384)``, computed by the worker."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_one() for a single text")
        import numpy as np

        if not all(isinstance(text, str) for text in texts):
            raise TypeError("texts must be str")
        if not texts:
            return np.empty((0, EMBEDDING_DIM), dtype=np.float32)
        if self._error is not None:
            raise self._error
        # Lone surrogates cannot travel as UTF-8 JSON: replace them here, as the embedder would.
        clean = [text.encode("utf-8", errors="replace").decode("utf-8") for text in texts]
        _header, payload = self._request({"op": "embed", "texts": clean})
        self._loaded = True
        rows: NDArray[np.float32] = np.frombuffer(payload, dtype="<f4").astype(np.float32)
        if rows.size != len(texts) * EMBEDDING_DIM:
            raise WorkerLost("the embedding worker answered with vectors of the wrong size")
        return rows.reshape(len(texts), EMBEDDING_DIM)

    def embed_one(self, text: str) -> NDArray[np.float32]:
        """The vector of one text, shape ``(384,)``."""
        vector: NDArray[np.float32] = self.embed([text])[0]
        return vector

    # ------------------------------------------------------------------ the worker's own requests
    def backfill(self, project_dir: Path) -> dict[str, Any]:
        """Ask the worker to embed every finished message of ``project_dir`` still without chunks."""
        return self._request({"op": "backfill", "project": str(Path(project_dir).resolve())})[0]

    def progress(self, project_dir: Path) -> dict[str, Any]:
        """How far the worker's backfill of ``project_dir`` is (``embedded``, ``total``, ``running``)."""
        return self._request({"op": "progress", "project": str(Path(project_dir).resolve())})[0]

    def nearest_chunks(self, project_dir: Path, vector: NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The ``k`` stored chunks of ``project_dir`` most like ``vector``: (chunk id, cosine), best first.

        The worker keeps the project's vector index (154 MB at 100,000 chunks), so this process does not.
        """
        import numpy as np

        payload = np.asarray(vector, dtype="<f4").tobytes()
        header = {"op": "nearest", "project": str(Path(project_dir).resolve()), "k": int(k)}
        hits = self._request(header, payload)[0]["hits"]
        return [(int(chunk_id), float(score)) for chunk_id, score in hits]

    def worker_pid(self) -> int:
        """The pid of the worker serving this project (starting one if needed)."""
        return int(self._request({"op": "hello"})[0]["pid"])

    def wake(self) -> None:
        """Start the worker now unless it runs, so that a search soon need not wait for it.

        A new worker loads the model and the project's vectors as it starts. Nothing happens without
        a model here or after the worker failed; a worker that cannot start is reported as usual.
        """
        if self._error is not None or self.loaded or not quick_status(self._env).available:
            return
        with contextlib.suppress(EmbeddingUnavailable):
            self._request({"op": "hello"})

    def close(self) -> None:
        """Close this client's connections (the worker leaves by itself once idle)."""
        with self._lock:
            connections, self._idle_connections = self._idle_connections, []
        for conn in connections:
            conn.close()

    # ------------------------------------------------------------------ plumbing
    def _request(self, header: dict[str, Any], payload: bytes = b"") -> tuple[dict[str, Any], bytes]:
        last_problem = "the embedding worker did not answer"
        for _attempt in range(ATTEMPTS):
            conn = self._checkout()
            try:
                answer = self._exchange(conn, header, payload)
            except _IdleExit:
                conn.close()
                self._drop_idle_connections()  # they all belong to the worker that left
                continue
            except (OSError, ProtocolError) as exc:
                conn.close()
                self._drop_idle_connections()
                last_problem = f"the embedding worker stopped ({exc or type(exc).__name__})"
                self._tell_lost(last_problem)
                continue
            with self._lock:
                self._lost_told = False
                self._idle_connections.append(conn)
            reply, answer_payload = answer
            if reply.get("ok"):
                return reply, answer_payload
            if "reason" in reply:
                kind = Unavailability(reply.get("kind", Unavailability.LOAD_FAILED))
                self._error = EmbeddingUnavailable(kind, str(reply["reason"]), str(reply.get("hint", "")))
                self._loaded = False
                raise self._error
            raise WorkerLost(f"the embedding worker refused the request: {reply.get('error')}")
        raise WorkerLost(last_problem)

    @staticmethod
    def _exchange(conn: socket.socket, header: dict[str, Any], payload: bytes) -> tuple[dict[str, Any], bytes]:
        # A send to a worker that has left may fail while its "bye" still waits to be read.
        with contextlib.suppress(OSError):
            send_frame(conn, header, payload)
        answer = receive_frame(conn)
        if answer is None:
            raise ProtocolError("the connection closed")
        if answer[0].get("bye"):
            raise _IdleExit
        return answer

    def _tell_lost(self, reason: str) -> None:
        with self._lock:
            if self._lost_told:
                return
            self._lost_told = True
        if self.on_lost is not None:
            self.on_lost(reason)

    def _drop_idle_connections(self) -> None:
        with self._lock:
            connections, self._idle_connections = self._idle_connections, []
        for conn in connections:
            conn.close()

    def _checkout(self) -> socket.socket:
        with self._lock:
            if self._idle_connections:
                return self._idle_connections.pop()
        return self._connect()

    def _try_connect(self, path: Path) -> socket.socket | None:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(str(path))
        except OSError:
            conn.close()
            return None
        conn.settimeout(ANSWER_TIMEOUT_SECONDS)  # a worker that hangs is treated as one that died
        return conn

    def _connect(self) -> socket.socket:
        path = socket_path(self.state_dir.resolve())
        conn = self._try_connect(path)
        if conn is not None:
            return conn
        process = self._spawn()
        deadline = time.monotonic() + self._start_timeout
        delay = 0.01
        while time.monotonic() < deadline:
            conn = self._try_connect(path)
            if conn is not None:
                return conn
            if process.poll() is not None:
                # It found another worker holding the lock (answering by now), or it failed.
                conn = self._try_connect(path)
                if conn is not None:
                    return conn
                if process.returncode != 0:
                    raise WorkerLost(f"the embedding worker exited with status {process.returncode} "
                                     f"(see {self.state_dir / LOG_NAME})")
                process = self._spawn()
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        raise WorkerLost(f"the embedding worker did not start within {self._start_timeout:.0f} s")

    def _spawn(self) -> subprocess.Popen[bytes]:
        try:
            return self._start_process()
        except OSError as exc:  # a read-only or full state folder, a missing interpreter: full text, said once
            raise WorkerLost(f"the embedding worker cannot start ({exc.strerror or exc})") from exc

    def _start_process(self) -> subprocess.Popen[bytes]:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with self._lock:  # reap workers that left, so none lingers as a zombie
            self._children = [child for child in self._children if child.poll() is None]
            self.starts += 1
        with open(self.state_dir / LOG_NAME, "ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "tunaflow_tui.core.memory.worker", str(self.state_dir.resolve()),
                 "--idle", repr(float(self.idle_seconds))],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, close_fds=True,
                start_new_session=True,  # a Ctrl-C in the terminal is the app's, not the worker's
                env=dict(os.environ),
            )
        with self._lock:
            self._children.append(process)
        return process
