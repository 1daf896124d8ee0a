"""Local text embeddings with all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime's CPU provider.

The pipeline: WordPiece tokens (truncated to 256, padded only to the longest text of a batch),
the ONNX encoder, mean pooling over the attention mask, L2 normalisation. One vector is 384
float32 values; the cosine of two vectors is their dot product.

**Threading.** Loading takes 0.3–0.8 s (imports, hashing the file, building the session) and one
800-character chunk takes 50–90 ms to embed on two cores. Call :meth:`Embedder.load` and
:meth:`Embedder.embed` from a worker thread, never on the event loop; both are thread-safe, and
loading happens once however many threads ask. :meth:`Embedder.available` is the only method meant
for the event loop: it neither loads nor hashes anything.

Importing this module imports neither numpy nor onnxruntime; they are imported at load time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tunaflow_tui.core.memory.model_files import (
    EMBEDDING_DIM,
    MODEL_ID,
    EmbeddingUnavailable,
    ModelLocation,
    ModelStatus,
    Unavailability,
    import_runtime,
    locate_model,
    quick_status,
    read_verified_model,
    tokenizer_file,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["EMBEDDING_DIM", "MAX_BATCH", "MAX_TOKENS", "MODEL_ID", "Embedder", "EmbeddingUnavailable",
           "shared_embedder"]

#: Tokens the model sees per text; the tokenizer file's own setting (128) would cut chunks short.
MAX_TOKENS = 256
#: Texts per model call. Larger batches are no faster on two cores and cost hundreds of MB.
MAX_BATCH = 4
#: Characters handed to the tokenizer per text: 256 tokens never span more in real text, and
#: tokenizing a megabyte only to keep its first 256 tokens would waste a second.
MAX_TEXT_CHARS = 20_000


def _prepared(text: str) -> str:
    """``text`` cut to :data:`MAX_TEXT_CHARS`, with lone surrogates (which the tokenizer rejects) replaced."""
    if not isinstance(text, str):
        raise TypeError(f"texts must be str, not {type(text).__name__}")
    text = text[:MAX_TEXT_CHARS]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", errors="replace").decode("utf-8")
    return text


class Embedder:
    """Turns texts into unit-length 384-dimensional float32 vectors; loads the model on first use.

    ``env`` replaces ``os.environ`` for the ``TUNAFLOW_EMBEDDING_MODEL`` look-up (tests, doctor).
    A failed load is remembered: later calls raise the same :class:`EmbeddingUnavailable` at once,
    so a missing model costs one check, not one per message. Make a new instance to try again.
    """

    def __init__(self, env: Mapping[str, str] | None = None, *, batch_size: int = MAX_BATCH,
                 max_tokens: int = MAX_TOKENS, threads: int = 0) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH}")
        if not 8 <= max_tokens <= 512:
            raise ValueError("max_tokens must be between 8 and 512 (the model's position limit)")
        self._env = env
        self._batch_size = batch_size
        self._max_tokens = max_tokens
        self._threads = threads
        self._load_lock = threading.Lock()
        self._tokenizer_lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()
        self._output_name = ""
        self._error: EmbeddingUnavailable | None = None
        self._location: ModelLocation | None = None
        self.load_seconds: float | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded and ready."""
        return self._session is not None

    @property
    def error(self) -> EmbeddingUnavailable | None:
        """Why loading failed, once it has; None before a load and after a successful one."""
        return self._error

    @property
    def location(self) -> ModelLocation | None:
        """The model file in use, once loaded."""
        return self._location

    def available(self) -> bool:
        """Whether embedding can be expected to work, without loading or hashing anything (cheap).

        True once loaded; False once a load failed; otherwise the result of
        :func:`~tunaflow_tui.core.memory.model_files.quick_status`. The sha256 is checked at load,
        so a file of the right size but wrong content reports True here and fails in :meth:`load`.
        """
        if self._session is not None:
            return True
        if self._error is not None:
            return False
        return quick_status(self._env).available

    def status(self) -> ModelStatus:
        """Like :meth:`available`, with the sentence that explains it."""
        if self._session is not None and self._location is not None:
            return ModelStatus(True, f"loaded from {self._location.source}", self._location, verified=True)
        if self._error is not None:
            return ModelStatus.failed(self._error, self._location)
        return quick_status(self._env)

    def load(self) -> None:
        """Load the tokenizer and the ONNX session once (thread-safe; a worker thread only).

        Raises :class:`EmbeddingUnavailable` when the package is missing, the file's sha256 is not
        the pinned one, onnxruntime cannot be imported or the session cannot be built.
        """
        if self._session is not None:
            return
        with self._load_lock:
            if self._session is not None:
                return
            if self._error is not None:
                raise self._error
            started = time.perf_counter()
            try:
                self._load_locked()
            except EmbeddingUnavailable as error:
                self._error = error
                raise
            except Exception as exc:  # a corrupt tokenizer file or a native failure: same outcome
                self._error = EmbeddingUnavailable(Unavailability.LOAD_FAILED,
                                                   f"the embedding model could not be loaded: {exc}")
                raise self._error from exc
            self.load_seconds = time.perf_counter() - started

    def _load_locked(self) -> None:
        location = locate_model(self._env)
        self._location = location
        model_bytes = read_verified_model(location)
        import_runtime("numpy")
        tokenizers: Any = import_runtime("tokenizers")
        ort: Any = import_runtime("onnxruntime")
        tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_file()))
        # The file carries truncation 128 and padding Fixed(128): replace both.
        tokenizer.enable_truncation(max_length=self._max_tokens)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text of the batch
        try:
            ort.set_default_logger_severity(3)  # warnings would land on the user's terminal
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            # No memory arena: it keeps the largest batches' buffers and grows with each new shape
            # (+90 MB over 40 mixed batches, 190 MB over a backfill); freeing them costs no CPU that
            # shows. Memory patterns (planned buffers per shape) stay: without them CPU time grows.
            options.enable_cpu_mem_arena = False
            # Idle worker threads must not spin: the UI shares these cores.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for a bad graph
            raise EmbeddingUnavailable(Unavailability.LOAD_FAILED,
                                       f"onnxruntime could not load {location.path}: {exc}",
                                       "reinstall onnxruntime and the model package") from exc
        self._tokenizer = tokenizer
        self._input_names = frozenset(node.name for node in session.get_inputs())
        self._output_name = session.get_outputs()[0].name
        missing = {"input_ids", "attention_mask"} - self._input_names
        if missing:
            raise EmbeddingUnavailable(Unavailability.LOAD_FAILED,
                                       f"the model {location.path} lacks the inputs {sorted(missing)}")
        self._session = session
        try:
            probe = self._embed_batch(["warm-up"])
        except Exception as exc:
            self._session = None
            raise EmbeddingUnavailable(Unavailability.LOAD_FAILED,
                                       f"the model {location.path} failed its first run: {exc}") from exc
        if probe.shape != (1, EMBEDDING_DIM):
            self._session = None
            raise EmbeddingUnavailable(Unavailability.LOAD_FAILED,
                                       f"the model {location.path} gives vectors of shape {probe.shape[1:]}, "
                                       f"not ({EMBEDDING_DIM},)")

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit-length row per text, shape ``(len(texts), 384)``, in the order given.

        Loads the model first if needed (so: a worker thread only). Texts are embedded in batches
        of at most 4, longest first, so that little padding is computed. Raises
        :class:`EmbeddingUnavailable` when the model cannot be used.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_one() for a single text")
        prepared = [_prepared(text) for text in texts]
        import numpy as np

        if not prepared:
            return np.empty((0, EMBEDDING_DIM), dtype=np.float32)
        self.load()

        result = np.empty((len(prepared), EMBEDDING_DIM), dtype=np.float32)
        order = sorted(range(len(prepared)), key=lambda i: len(prepared[i]), reverse=True)
        for start in range(0, len(order), self._batch_size):
            rows = order[start:start + self._batch_size]
            result[rows] = self._embed_batch([prepared[i] for i in rows])
        return result

    def embed_one(self, text: str) -> NDArray[np.float32]:
        """The vector of one text, shape ``(384,)``."""
        vector: NDArray[np.float32] = self.embed([text])[0]
        return vector

    def _embed_batch(self, texts: list[str]) -> NDArray[np.float32]:
        import numpy as np

        with self._tokenizer_lock:
            encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([enc.ids for enc in encodings], dtype=np.int64)
        mask = np.array([enc.attention_mask for enc in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = np.asarray(self._session.run([self._output_name], feeds)[0], dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return normalised


_SHARED_LOCK = threading.Lock()
_SHARED: Embedder | None = None


def shared_embedder() -> Embedder:
    """The process-wide embedder (one model in memory, about 230 MB, shared by every feature).

    Creating it is cheap; the model loads on the first :meth:`Embedder.load` or :meth:`Embedder.embed`.
    """
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Embedder()
        return _SHARED
