"""What the memory features need of an embedder, wherever its model runs.

:class:`~tunaflow_tui.core.memory.embedder.Embedder` runs the model in the calling process (the
embedding worker, tests, benchmarks); :class:`~tunaflow_tui.core.memory.worker_client.WorkerEmbedder`
asks the project's embedding worker, so that the app's process never loads onnxruntime. The
indexer, project search, query vectors and roundtable recall take either.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from tunaflow_tui.core.memory.model_files import EmbeddingUnavailable, ModelStatus


class TextEmbedder(Protocol):
    """Turns texts into unit-length 384-dimensional float32 vectors (a worker thread only, but for the properties)."""

    @property
    def loaded(self) -> bool:
        """Whether the model is ready to embed."""

    @property
    def error(self) -> EmbeddingUnavailable | None:
        """Why the model cannot be used, once known."""

    def available(self) -> bool:
        """Whether embedding can be expected to work (cheap: loads nothing)."""

    def status(self) -> ModelStatus:
        """Like :meth:`available`, with the sentence that explains it."""

    def load(self) -> None:
        """Make the model ready; raises EmbeddingUnavailable."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One row per text, shape ``(len(texts), 384)``."""

    def embed_one(self, text: str) -> NDArray[np.float32]:
        """The vector of one text, shape ``(384,)``."""


@runtime_checkable
class RemoteVectors(Protocol):
    """An embedder whose process also keeps the project's vector index and searches it."""

    def nearest_chunks(self, project_dir: Path, vector: NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The ``k`` stored chunks most like ``vector``: (chunk id, cosine), best first."""
