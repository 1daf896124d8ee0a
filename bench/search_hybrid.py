"""Benchmark: hybrid search (FTS5 bm25 + vectors, fused by rank) over 10k and 100k chunks.

For each size it generates engineering conversations (bench/memory_corpus.py: template sentences
over a large vocabulary mixed with the hand-written set's sentences and identifiers), chunks the
messages (≤ 800 characters) and stores them the way a caller of the memory engine would, in a
temporary SQLite file: the messages in an FTS5 table (unicode61, as the message index) and one
1,536-byte vector blob per chunk in a plain table. The index is then loaded with
``VectorIndex.from_blobs`` (its time and the RSS it adds are printed).

Vectors: embedding 100k chunks would take hours, so the model embeds a pool of generated chunks
and every stored vector is a random mix of two pool vectors plus noise (realistic norms and
neighbourhoods; search cost does not depend on what the vectors mean). Queries are real
embeddings of generated and hand-written questions.

Per size it prints, as median/p95 over interleaved rounds (wall time, and process CPU time, which
the load of other processes on the machine inflates less):
  * vector search exact (brute force over the float matrix: the baseline) and approximate (sign
    bits pick ``candidate_count(k)`` rows, exact cosine ranks them), and which of the two project
    search uses at this size; the recall of the approximate top 10 and top 50 against the exact
    ones, and the same for a sweep of candidate counts (the choice of ``CANDIDATES_PER_HIT``);
  * hybrid with exact vectors, and hybrid as project search runs it — the messages holding every word of the query (one FTS
    query) + vector top 50 chunks → messages + reciprocal rank fusion (``hybrid_search``), without
    the query embedding; run one after the other, and with the vector search on a worker thread
    beside the FTS query;
  * hybrid, all tiers: the earlier fusion, with the any-word tier too (all words, then any, common
    words left out), kept as the baseline of the change;
  * baseline: FTS only (the tiers); also vectors only, and FTS without leaving common words out;
  * hybrid through the worker, as the product runs it since the vector index left the app's process:
    the same queries and the same full-text side, the vector top 50 asked of a real embedding worker
    process (``WorkerEmbedder.nearest_chunks`` over its socket) serving the same chunks and vectors,
    stored in a temporary project laid out by the product's Store (messages through
    ``add_messages``, chunk rows as the indexer stores them); run one after the other and in
    parallel, interleaved with the in-process variants, and the vector top 50 alone through it
    (their CPU time is this process's only: the worker's own is not in it); first, how often its
    fused top 10 is the in-process one, and its start (model load and index read);
  * the query embedding time, index build throughput (FTS rows/s, blob rows/s, load rows/s), RSS.
Goal: hybrid p95 ≤ 15 ms at 100k chunks, for the faster variant, in process and through the worker
(the product's path); exit code 1 otherwise. ``--no-worker`` leaves the worker variant out.

Run:  .venv/bin/python bench/search_hybrid.py [--sizes 10000 100000] [--queries 60] [--rounds 3] [--no-worker]
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path

import numpy as np
from memory_corpus import ConversationGenerator, load_queries

from tunaflow_tui.core.memory import vectors as vector_module
from tunaflow_tui.core.memory.chunks import split_into_chunks
from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.fts_search import every_word_search, tiered_search
from tunaflow_tui.core.memory.fusion import rank_owners
from tunaflow_tui.core.memory.hybrid import hybrid_search
from tunaflow_tui.core.memory.model_files import MODEL_ID
from tunaflow_tui.core.memory.vectors import VectorIndex, candidate_count, vector_to_blob
from tunaflow_tui.core.memory.worker_client import WorkerEmbedder
from tunaflow_tui.core.storage import Store

GOAL_P95_MS = 15.0
CANDIDATES = 50
POOL = 160
WORKER_NAMES = ("hybrid, worker", "hybrid, worker, parallel", "vector only, worker")


def _rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def _rss_mb_of(pid: int) -> float:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Corpus:
    """Generated messages in a temporary SQLite file, and their chunks' vectors in a VectorIndex."""

    def __init__(self, folder: Path, chunk_target: int, pool: np.ndarray, seed: int) -> None:
        generator = ConversationGenerator(seed)
        rng = np.random.default_rng(seed)
        self.messages: list[str] = []
        owners: list[int] = []
        while len(owners) < chunk_target:
            text = generator.message()
            owners += [len(self.messages)] * len(split_into_chunks(text))
            self.messages.append(text)
        owners = owners[:chunk_target]
        self.conn = sqlite3.connect(folder / f"memory-{chunk_target}.db")
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, tokenize='unicode61')")
        self.conn.execute("CREATE TABLE chunk_vectors (id INTEGER PRIMARY KEY, message_id INTEGER, vector BLOB)")
        started = time.perf_counter()
        with self.conn:
            self.conn.executemany("INSERT INTO messages_fts(rowid, content) VALUES (?, ?)", enumerate(self.messages))
        self.fts_rate = len(self.messages) / (time.perf_counter() - started)
        vectors = self._synthetic_vectors(pool, len(owners), rng)
        started = time.perf_counter()
        with self.conn:
            self.conn.executemany("INSERT INTO chunk_vectors VALUES (?, ?, ?)",
                                  ((i, owner, vector_to_blob(vectors[i])) for i, owner in enumerate(owners)))
        self.blob_rate = len(owners) / (time.perf_counter() - started)
        del vectors
        started = time.perf_counter()
        rss = _rss_mb()
        # Built to search approximately at any size; ``exact`` below picks the path per call.
        self.index: VectorIndex[int] = VectorIndex.from_blobs(self.conn.execute("SELECT id, vector FROM chunk_vectors"),
                                                              exact_below=0)
        self.load_seconds = time.perf_counter() - started
        self.index_mb = _rss_mb() - rss
        self.owners = [row[0] for row in self.conn.execute("SELECT message_id FROM chunk_vectors ORDER BY id")]
        self.load_rate = len(owners) / (time.perf_counter() - started)
        self.conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, messages_fts, row)")

    @staticmethod
    def _synthetic_vectors(pool: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
        first, second = rng.integers(len(pool), size=count), rng.integers(len(pool), size=count)
        weight = rng.uniform(0.2, 0.8, size=(count, 1)).astype(np.float32)
        vectors = pool[first] * weight + pool[second] * (1 - weight)
        vectors += rng.standard_normal(vectors.shape, dtype=np.float32) * 0.03
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors

    def run(self, expression: str, limit: int) -> list[int]:
        """One FTS expression, bm25 order."""
        rows = self.conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
                                 "ORDER BY bm25(messages_fts) LIMIT ?", (expression, limit)).fetchall()
        return [row[0] for row in rows]

    def doc_frequency(self, term: str, prefix: bool) -> int:
        """Rows containing ``term`` (or a term starting with it), from the fts5vocab table."""
        if prefix:
            row = self.conn.execute("SELECT coalesce(sum(doc), 0) FROM temp.vocab WHERE term >= ? AND term < ?",
                                    (term, term + "\U0010ffff")).fetchone()
        else:
            row = self.conn.execute("SELECT coalesce(sum(doc), 0) FROM temp.vocab WHERE term = ?", (term,)).fetchone()
        return int(row[0])

    def fts(self, text: str, prune: bool = True) -> list[int]:
        """Message ids from the FTS tiers."""
        return tiered_search(self.run, text, CANDIDATES, doc_frequency=self.doc_frequency if prune else None)

    def vector_ranking(self, vector: np.ndarray, exact: bool = False) -> list[int]:
        """Message ids of the top chunks, each message at its best chunk's rank."""
        hits = self.index.top_k(vector, CANDIDATES, exact=exact)
        return rank_owners((hit.id for hit in hits), self.owners.__getitem__)

    def hybrid(self, text: str, vector: np.ndarray, executor: Executor | None = None, *,
               all_tiers: bool = False, exact: bool = False) -> list[int]:
        """The fused top 10 messages (the vector search on ``executor`` beside the FTS query, if given).

        As project search fuses: the every-word tier beside the vectors; ``all_tiers`` fuses the
        any-word tier too (the earlier way).
        """
        def fts() -> list[int]:
            return self.fts(text) if all_tiers else every_word_search(self.run, text, CANDIDATES)

        hits = hybrid_search(fts, lambda: self.vector_ranking(vector, exact), executor=executor)
        return [hit.id for hit in hits]


class WorkerVectors:
    """The corpus's chunks and vectors in a temporary project as the product's Store lays it out, and
    the vector top k asked of a real embedding worker serving that project (started as the app does)."""

    def __init__(self, folder: Path, corpus: Corpus, probe: np.ndarray) -> None:
        self.project = folder / f"project-{len(corpus.owners)}"
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        started = time.perf_counter()
        with Store.open(self.project) as store:
            store.add_messages("main", ({"role": "user", "content": text} for text in corpus.messages))
        state_db = self.project / ".tunaflow" / "state.db"
        db = sqlite3.connect(state_db)
        message_ids = [row[0] for row in db.execute("SELECT id FROM messages ORDER BY id")]
        assert len(message_ids) == len(corpus.messages)

        def chunk_rows() -> Iterator[tuple[int, int, int, int, int, str, bytes]]:
            blobs = corpus.conn.execute("SELECT id, message_id, vector FROM chunk_vectors ORDER BY id")
            places = ((owner, chunk) for owner, text in enumerate(corpus.messages)
                      for chunk in split_into_chunks(text))
            for (chunk_id, owner, blob), (place_owner, chunk) in zip(blobs, places, strict=False):
                assert owner == place_owner
                # Chunk id = the bench's chunk number + 1, so both paths name a chunk alike.
                yield (chunk_id + 1, message_ids[owner], chunk.index, chunk.start, chunk.end, MODEL_ID, blob)

        with db:
            db.executemany("INSERT INTO message_chunks (id, message_id, chunk_index, start_offset, end_offset, "
                           "model_id, vector) VALUES (?, ?, ?, ?, ?, ?, ?)", chunk_rows())
        db.close()
        self.build_seconds = time.perf_counter() - started
        self.owners = corpus.owners
        # As the app builds it (runtime.memory.default_embedder): the state folder beside state.db.
        # Idle time long enough for the recall sweep between two requests; stopped in close().
        self.client = WorkerEmbedder(state_db.parent, idle_seconds=900.0)
        started = time.perf_counter()
        self.client.load()
        self.pid = self.client.worker_pid()
        self.client.nearest_chunks(self.project, probe, CANDIDATES)  # the worker reads the index
        self.start_seconds = time.perf_counter() - started

    def vector_ranking(self, vector: np.ndarray) -> list[int]:
        """Message ids (the bench's numbering) of the worker's top chunks, each at its best chunk's rank."""
        hits = self.client.nearest_chunks(self.project, vector, CANDIDATES)
        return rank_owners((chunk_id - 1 for chunk_id, _score in hits), self.owners.__getitem__)

    def hybrid(self, corpus: Corpus, text: str, vector: np.ndarray, executor: Executor | None = None) -> list[int]:
        """The fused top 10 as :meth:`Corpus.hybrid` fuses them, the vector side from the worker."""
        hits = hybrid_search(lambda: every_word_search(corpus.run, text, CANDIDATES),
                             lambda: self.vector_ranking(vector), executor=executor)
        return [hit.id for hit in hits]

    def close(self) -> None:
        """Close the connections and stop the worker this bench started."""
        self.client.close()
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and Path(f"/proc/{self.pid}").exists():
            with open(f"/proc/{self.pid}/stat") as stat:
                if stat.read().split(") ")[-1].startswith("Z"):
                    break  # gone, only not reaped yet
            time.sleep(0.05)


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def _line(name: str, wall: list[float], cpu: list[float] | None = None) -> str:
    text = f"  {name:<30} p50 {_pct(wall, 0.5):7.2f} ms  p95 {_pct(wall, 0.95):7.2f} ms"
    if cpu is not None:
        text += f"   (CPU p50 {_pct(cpu, 0.5):6.2f}, p95 {_pct(cpu, 0.95):6.2f})"
    return text


def _recall(found: list[int], expected: list[int]) -> float:
    return len(set(found) & set(expected)) / max(1, len(expected))


def _print_recall(corpus: Corpus, questions: list[str], query_vectors: list[np.ndarray]) -> None:
    """Recall of the approximate top k against the exact one, at the chosen candidate count and a sweep."""
    ks = (10, CANDIDATES)
    exact = {k: [[h.id for h in corpus.index.top_k(v, k, exact=True)] for v in query_vectors] for k in ks}
    exact_fused = [corpus.hybrid(q, v, exact=True) for q, v in zip(questions, query_vectors, strict=True)]
    chosen = vector_module.CANDIDATES_PER_HIT
    for per_hit in sorted({20, 40, 60, chosen, 160}):
        vector_module.CANDIDATES_PER_HIT = per_hit
        try:
            counts = [candidate_count(k) for k in ks]
            cpu: list[float] = []
            recalls: dict[int, list[float]] = {k: [] for k in ks}
            for qi, vector in enumerate(query_vectors):
                for k in ks:
                    started = time.process_time()
                    found = [h.id for h in corpus.index.top_k(vector, k)]
                    if k == CANDIDATES:
                        cpu.append((time.process_time() - started) * 1000)
                    recalls[k].append(_recall(found, exact[k][qi]))
            fused = [_recall(corpus.hybrid(q, v), exact_fused[i])
                     for i, (q, v) in enumerate(zip(questions, query_vectors, strict=True))]
        finally:
            vector_module.CANDIDATES_PER_HIT = chosen
        mark = "  <- chosen" if per_hit == chosen else ""
        print(f"  approximate, {counts[0]} / {counts[1]} candidates for k = 10 / {CANDIDATES}: "
              f"recall@10 {np.mean(recalls[10]):.3f} (min {min(recalls[10]):.1f}), "
              f"recall@{CANDIDATES} {np.mean(recalls[CANDIDATES]):.3f} (min {min(recalls[CANDIDATES]):.2f}); "
              f"fused top 10 as with exact vectors {np.mean(fused):.3f} (min {min(fused):.1f}); "
              f"top {CANDIDATES} CPU p50 {_pct(cpu, 0.5):.2f} ms{mark}")


def _measure_size(folder: Path, size: int, pool: np.ndarray, questions: list[str],
                  query_vectors: list[np.ndarray], rounds: int, with_worker: bool = True) -> bool:
    """Build a corpus of ``size`` chunks, time the searches, print; False when the goal applies and fails."""
    corpus = Corpus(folder, size, pool, seed=size)
    worker = WorkerVectors(folder, corpus, query_vectors[0]) if with_worker else None
    try:
        return _measure(corpus, worker, size, questions, query_vectors, rounds)
    finally:
        if worker is not None:
            worker.close()
        corpus.conn.close()


def _measure(corpus: Corpus, worker: WorkerVectors | None, size: int, questions: list[str],
             query_vectors: list[np.ndarray], rounds: int) -> bool:
    """Time and print the searches of one corpus; False when the goal applies and fails."""
    product = "exact" if size < vector_module.EXACT_BELOW else "approximate"
    print(f"\n{size:,} chunks from {len(corpus.messages):,} messages; build: FTS {corpus.fts_rate:,.0f} rows/s, "
          f"vector blobs {corpus.blob_rate:,.0f} rows/s, VectorIndex.from_blobs {corpus.load_rate:,.0f} rows/s "
          f"({corpus.load_seconds:.2f} s with the SQLite read, floats and bits {corpus.index_mb:+.0f} MB RSS); "
          f"RSS {_rss_mb():.0f} MB; project search uses {product} vector search at this size")
    if worker is not None:
        print(f"  worker: project written by the Store in {worker.build_seconds:.1f} s; worker started, model "
              f"loaded and index read in {worker.start_seconds:.2f} s (pid {worker.pid}, RSS "
              f"{_rss_mb_of(worker.pid):.0f} MB)")
        pairs = list(zip(questions, query_vectors, strict=True))
        same = [_recall(worker.hybrid(corpus, q, v), corpus.hybrid(q, v)) for q, v in pairs]
        print(f"  worker's fused top 10 as in process: {np.mean(same):.3f} (min {min(same):.1f}; the worker's "
              f"index searches {'exactly' if size < vector_module.EXACT_BELOW else 'approximately'} at this size)")
    _print_recall(corpus, questions, query_vectors)
    names: tuple[str, ...] = ("hybrid, exact vectors (before)", "hybrid", "hybrid, parallel", "hybrid, all tiers",
                              "fts only", "vector only, exact (before)", "vector only", "fts only, no pruning")
    if worker is not None:
        names += WORKER_NAMES
    timings: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in names}
    with ThreadPoolExecutor(max_workers=1) as executor:
        for round_no in range(rounds):
            for qi, question in enumerate(questions):
                vector = query_vectors[qi]
                runs: list[tuple[str, Callable[[], object]]] = [
                    ("hybrid, exact vectors (before)", lambda q=question, v=vector: corpus.hybrid(q, v, exact=True)),
                    ("hybrid", lambda q=question, v=vector: corpus.hybrid(q, v)),
                    ("hybrid, parallel", lambda q=question, v=vector: corpus.hybrid(q, v, executor)),
                    ("hybrid, all tiers", lambda q=question, v=vector: corpus.hybrid(q, v, all_tiers=True)),
                    ("fts only", lambda q=question: corpus.fts(q)),
                    ("vector only, exact (before)", lambda v=vector: corpus.vector_ranking(v, exact=True)),
                    ("vector only", lambda v=vector: corpus.vector_ranking(v)),
                    ("fts only, no pruning", lambda q=question: corpus.fts(q, prune=False)),
                ]
                if worker is not None:
                    runs += [
                        ("hybrid, worker", lambda q=question, v=vector: worker.hybrid(corpus, q, v)),
                        ("hybrid, worker, parallel",
                         lambda q=question, v=vector: worker.hybrid(corpus, q, v, executor)),
                        ("vector only, worker", lambda v=vector: worker.vector_ranking(v)),
                    ]
                if (round_no + qi) % 2:
                    runs.reverse()
                for name, fn in runs:
                    wall, cpu = _timed(fn)
                    timings[name][0].append(wall)
                    timings[name][1].append(cpu)
    for name, (wall, cpu) in timings.items():
        print(_line(name, wall, cpu))
    fts_wall = timings["fts only"][0]
    for name in ("hybrid", "hybrid, parallel", "hybrid, all tiers"):
        wall = timings[name][0]
        print(f"  {name} / fts only: p50 {_pct(wall, 0.5) / _pct(fts_wall, 0.5):.2f}×, "
              f"p95 {_pct(wall, 0.95) / _pct(fts_wall, 0.95):.2f}×")
    for name, before in (("hybrid", "hybrid, exact vectors (before)"), ("vector only", "vector only, exact (before)")):
        (wall, cpu), (wall_before, cpu_before) = timings[name], timings[before]
        print(f"  {name} / exact: wall p95 {_pct(wall, 0.95) / _pct(wall_before, 0.95):.2f}×, "
              f"CPU p50 {_pct(cpu, 0.5) / _pct(cpu_before, 0.5):.2f}×, CPU p95 {_pct(cpu, 0.95) / _pct(cpu_before, 0.95):.2f}×")
    paths = {"in process": ("hybrid", "hybrid, parallel")}
    if worker is not None:
        paths["through the worker"] = ("hybrid, worker", "hybrid, worker, parallel")
        for name, local in (("hybrid, worker", "hybrid"), ("hybrid, worker, parallel", "hybrid, parallel"),
                            ("vector only, worker", "vector only")):
            wall, wall_local = timings[name][0], timings[local][0]
            print(f"  {name} / {local} (in process): p50 {_pct(wall, 0.5) / _pct(wall_local, 0.5):.2f}×, "
                  f"p95 {_pct(wall, 0.95) / _pct(wall_local, 0.95):.2f}×")
    if size < 100_000:
        return True
    ok = True
    for path, variants in paths.items():
        p95 = min(_pct(timings[name][0], 0.95) for name in variants)
        ok = ok and p95 <= GOAL_P95_MS
        print(f"  {'PASS' if p95 <= GOAL_P95_MS else 'FAIL'}: hybrid {path} p95 {p95:.1f} ms (the faster variant) "
              f"against the {GOAL_P95_MS:g} ms goal")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-worker", action="store_true", help="leave out the variant through the worker")
    args = parser.parse_args()
    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")

    embedder = Embedder()
    embedder.load()
    pool_gen = ConversationGenerator(99)
    pool_texts = [chunk.text for _ in range(POOL) for chunk in split_into_chunks(pool_gen.message())][:POOL]
    pool = embedder.embed(pool_texts)
    question_gen = ConversationGenerator(7)
    questions = [q.text for q in load_queries()][: args.queries // 2]
    questions += [question_gen.question() for _ in range(args.queries - len(questions))]
    embed_ms: list[float] = []
    query_vectors = []
    for question in questions:
        started = time.perf_counter()
        query_vectors.append(embedder.embed_one(question))
        embed_ms.append((time.perf_counter() - started) * 1000)
    print(f"query embedding: p50 {_pct(embed_ms, 0.5):.1f} ms, p95 {_pct(embed_ms, 0.95):.1f} ms "
          f"({len(questions)} questions)")

    verdict = True
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            verdict = _measure_size(Path(tmp), size, pool, questions, query_vectors, args.rounds,
                                    not args.no_worker) and verdict
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS {peak:.0f} MB (model loaded: ~230 MB of it); load average at end: "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0 if verdict else 1


if __name__ == "__main__":
    raise SystemExit(main())
