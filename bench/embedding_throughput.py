"""Benchmark: local embedding throughput, model load time and memory.

Chunks the labelled conversations (bench/data/conversations.txt) thread by thread into ~800-
character pieces — realistic engineering prose with code, numbers and identifiers — and embeds
the longest of them, in interleaved rounds:

  * model, batch 1 (one chunk per model call) and batch 4 (the embedder's default);
  * baseline: a plain tokenize pass (the same WordPiece tokenizer, no model), and a hashing-trick
    TF-IDF vectoriser (words + bigrams, crc32 into 4,096 dimensions, numpy), the fallback that needs
    no model.

It prints chunks/s per variant as the median with the spread over rounds, the ratio of each model
variant to the baselines, the cold load time (a fresh interpreter per run: imports, sha256 check,
session) and the in-process load, and RSS after loading and at peak.

Run:  .venv/bin/python bench/embedding_throughput.py [--chunks 48] [--rounds 3] [--cold 3]
"""

from __future__ import annotations

import argparse
import itertools
import resource
import statistics
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from memory_corpus import load_conversations
from tokenizers import Tokenizer

from tunaflow_tui.core.memory.chunks import split_into_chunks
from tunaflow_tui.core.memory.embedder import MAX_TOKENS, Embedder
from tunaflow_tui.core.memory.fts_query import STOP_WORDS
from tunaflow_tui.core.memory.model_files import tokenizer_file

HASH_DIM = 4_096


def _realistic_chunks(count: int) -> list[str]:
    """The ``count`` longest chunks of the labelled threads, each thread's messages joined."""
    threads: dict[str, list[str]] = {}
    for message in load_conversations():
        threads.setdefault(message.thread, []).append(f"{message.speaker}: {message.text}")
    chunks = [chunk.text for texts in threads.values() for chunk in split_into_chunks("\n\n".join(texts))]
    chunks.sort(key=len, reverse=True)
    return chunks[:count]


def _hash_vectorise(texts: Sequence[str]) -> np.ndarray:
    """Hashing-trick TF-IDF: words and bigrams, crc32 buckets, log term frequency, idf, L2 rows."""
    rows = np.zeros((len(texts), HASH_DIM), dtype=np.float32)
    for i, text in enumerate(texts):
        words = [w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split() if w not in STOP_WORDS]
        for feature in words + [f"{a} {b}" for a, b in itertools.pairwise(words)]:
            rows[i, zlib.crc32(feature.encode()) % HASH_DIM] += 1.0
    rows = np.log1p(rows)
    idf = np.log((1 + len(texts)) / (1 + (rows > 0).sum(axis=0))) + 1
    rows *= idf
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return rows


def _rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def _cold_load_seconds(runs: int) -> list[float]:
    script = ("import time; t = time.perf_counter()\n"
              "from tunaflow_tui.core.memory.embedder import Embedder\n"
              "Embedder().load(); print(time.perf_counter() - t)\n")
    return [float(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(runs)]


def _rate(fn: Callable[[], object], items: int) -> float:
    started = time.perf_counter()
    fn()
    return items / (time.perf_counter() - started)


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):8.1f}  ({min(values):.1f}–{max(values):.1f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cold", type=int, default=3, help="fresh-interpreter loads to time")
    args = parser.parse_args()

    chunks = _realistic_chunks(args.chunks)
    print(f"{len(chunks)} chunks, {statistics.mean(map(len, chunks)):.0f} characters on average "
          f"(min {min(map(len, chunks))}, max {max(map(len, chunks))})")
    cold = _cold_load_seconds(args.cold)
    rss_before = _rss_mb()
    embedder = Embedder()
    embedder.load()
    rss_loaded = _rss_mb()
    tokenizer = Tokenizer.from_file(str(tokenizer_file()))  # the embedder's tokenizer, same settings
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    tokens = [len(tokenizer.encode(chunk).ids) for chunk in chunks]
    print(f"tokens per chunk: mean {statistics.mean(tokens):.0f}, max {max(tokens)} "
          f"({sum(t >= 256 for t in tokens)} cut at 256)")

    variants: dict[str, Callable[[], object]] = {
        "model, batch 1": lambda: [embedder.embed([chunk]) for chunk in chunks],
        "model, batch 4": lambda: embedder.embed(chunks),
        "tokenize only": lambda: [tokenizer.encode(chunk) for chunk in chunks],
        "hashing TF-IDF": lambda: _hash_vectorise(chunks),
    }
    rates: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for round_no in range(args.rounds):
        order = names if round_no % 2 == 0 else names[::-1]  # interleaved, alternating order
        for name in order:
            rates[name].append(_rate(variants[name], len(chunks)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"\n{'variant':<16} {'chunks/s: median (min–max)':>30}")
    for name in names:
        print(f"{name:<16} {_spread(rates[name]):>30}")
    model1, model4 = statistics.median(rates["model, batch 1"]), statistics.median(rates["model, batch 4"])
    for baseline in ("tokenize only", "hashing TF-IDF"):
        base = statistics.median(rates[baseline])
        print(f"model / {baseline}: batch 1 {model1 / base:.4f}×, batch 4 {model4 / base:.4f}×")
    print(f"batch 4 / batch 1: {model4 / model1:.2f}×; one chunk takes {1000 / model1:.0f} ms at batch 1")
    print(f"\ncold load (fresh interpreter: imports, sha256, session): median {statistics.median(cold):.2f} s "
          f"({min(cold):.2f}–{max(cold):.2f}); in-process load {embedder.load_seconds:.2f} s")
    print(f"RSS: {rss_before:.0f} MB before loading, {rss_loaded:.0f} MB with the model loaded "
          f"(+{rss_loaded - rss_before:.0f} MB), peak {peak:.0f} MB after the runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
