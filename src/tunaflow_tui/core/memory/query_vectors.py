"""Query embeddings computed once per text, and started early enough to overlap other work.

Embedding a request is the largest single cost of retrieval (10–30 ms on two busy cores), and
the same text is often embedded more than once in a few seconds: a branch's first message is
embedded to link the branch to earlier conversations and again to retrieve for its answer; a
turn that is retried on a fresh session builds its pack twice. :class:`QueryVectors` keeps the
vectors of the last few texts, and :meth:`QueryVectors.start` embeds a text on a worker thread
while the caller does something else (onnxruntime releases the GIL, so full-text queries and
database reads run meanwhile); :meth:`QueryVectors.get` then waits for that same computation
instead of starting a second one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from tunaflow_tui.core.memory.model_files import EmbeddingUnavailable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from tunaflow_tui.core.memory.embedding_port import TextEmbedder

#: Texts whose vectors are kept (a vector is 1.5 KB).
REMEMBERED = 32


class QueryVectors:
    """The vectors of recent query texts, by text (thread-safe).

    A text is embedded at most once while it is remembered, however many threads ask for it at
    the same time. Nothing is embedded before the model is loaded unless a caller allows the load
    (:meth:`get` with ``load``), so a turn never waits for the model to load.
    """

    def __init__(self, embedder: TextEmbedder | None, *, remembered: int = REMEMBERED) -> None:
        self._embedder = embedder
        self._remembered = max(1, remembered)
        self._lock = threading.Lock()
        self._vectors: OrderedDict[str, Future[NDArray[np.float32] | None]] = OrderedDict()
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        self.computed = 0
        """How many texts were embedded (each remembered text counts once)."""

    def _compute(self, text: str) -> NDArray[np.float32] | None:
        assert self._embedder is not None
        try:
            vector = self._embedder.embed_one(text)
        except EmbeddingUnavailable:
            return None
        with self._lock:
            self.computed += 1
        return vector

    def _remembered_future(self, text: str) -> Future[NDArray[np.float32] | None] | None:
        future = self._vectors.get(text)
        if future is not None:
            self._vectors.move_to_end(text)
            if future.cancelled() or (future.done() and future.exception() is not None):
                del self._vectors[text]  # a failure or a cancelled start is not remembered
                return None
        return future

    def _remember(self, text: str, future: Future[NDArray[np.float32] | None]) -> None:
        self._vectors[text] = future
        while len(self._vectors) > self._remembered:
            self._vectors.popitem(last=False)

    def start(self, text: str) -> None:
        """Begin embedding ``text`` on a worker thread, if the model is loaded and it is not remembered."""
        embedder = self._embedder
        if embedder is None or not embedder.loaded or not text.strip():
            return
        with self._lock:
            if self._closed or self._remembered_future(text) is not None:
                return
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tunaflow-query-vector")
            self._remember(text, self._executor.submit(self._compute, text))

    def get(self, text: str, *, load: bool = True) -> NDArray[np.float32] | None:
        """The vector of ``text``: remembered, being computed (waited for), or computed now on this thread.

        None without a model, when the model cannot be loaded, or — with ``load`` False — before
        it is loaded. Loading the model takes a second: call this from a worker thread.
        """
        embedder = self._embedder
        if embedder is None or not embedder.available():
            return None
        if not load and not embedder.loaded:
            return None
        with self._lock:
            future = self._remembered_future(text)
            owner = future is None
            if future is None:
                future = Future()
                future.set_running_or_notify_cancel()
                if not self._closed:
                    self._remember(text, future)
        if owner:
            try:
                future.set_result(self._compute(text))
            except BaseException as exc:
                future.set_exception(exc)
                raise
        try:
            return future.result()
        except CancelledError:  # closed before the worker reached it
            return self._compute(text)

    def close(self) -> None:
        """Stop the worker thread (an embedding under way finishes); later starts do nothing."""
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
