"""Benchmark: retrieval quality of project memory — FTS5 bm25, vectors, and their rank fusion.

Indexes the hand-written labelled set (bench/data/conversations.txt: 320 messages from 56
engineering threads — plans, reviews, bug hunts, design debates, incident write-ups) the way
project memory does — every message in an FTS5 table (unicode61, as the message index), every
message chunked (≤ 800 characters) and each chunk embedded with the local model — and runs the
127 questions of bench/data/queries.txt ("reworded": in other words than the messages they should
find; "lexical": an identifier, flag or command). For each method it prints recall@5 (share of a
query's relevant messages in the top 5, averaged), hit@5 (at least one in the top 5) and MRR@10:

  * fts-and:   today's search-box expression (every word must match), for comparison;
  * fts:       natural-language tiers (all words, then any; stop words dropped, light stems), bm25;
  * vector:    cosine top chunks, each message at its best chunk's rank;
  * fused:     as project search fuses: reciprocal rank fusion (k=60) of the vectors and the
               messages holding every word of the query (the every-word tier);
  * fused-all: the earlier fusion, of the vectors and all fts tiers (kept for comparison).

A second, generated check looks up 120 verbatim 8-word phrases taken from the longer messages
(what a user types when they remember a sentence), as in docs/embeddings.md.

Goal: fused beats both fts and vector on recall@5 over the hand-written queries (exit code 1 otherwise).

Run:  .venv/bin/python bench/retrieval_quality.py [--verbose]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import time
from collections.abc import Sequence

from memory_corpus import Message, Query, load_conversations, load_queries

from tunaflow_tui.core.memory.chunks import split_into_chunks
from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.fts_search import every_word_search, tiered_search
from tunaflow_tui.core.memory.fusion import rank_owners, reciprocal_rank_fusion
from tunaflow_tui.core.memory.vectors import VectorIndex
from tunaflow_tui.core.storage.search_query import fts_match_expression

CANDIDATES = 50  # hits taken from each list before fusion
TOP = 5


def _fts_table(messages: Sequence[Message]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, tokenize='unicode61')")
    conn.executemany("INSERT INTO messages_fts(rowid, content) VALUES (?, ?)",
                     [(i, m.text) for i, m in enumerate(messages)])
    return conn


def _fts(conn: sqlite3.Connection, expression: str | None) -> list[int]:
    if expression is None:
        return []
    rows = conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
                        "ORDER BY bm25(messages_fts) LIMIT ?", (expression, CANDIDATES)).fetchall()
    return [row[0] for row in rows]


def _fts_tiered(conn: sqlite3.Connection, text: str) -> list[int]:
    """Messages with every word first, then those with some, as project memory searches."""
    return tiered_search(lambda expression, limit: _fts(conn, expression)[:limit], text, CANDIDATES)


def _metrics(ranked: list[int], relevant: set[int]) -> tuple[float, float, float]:
    top = ranked[:TOP]
    recall = len(relevant.intersection(top)) / len(relevant)
    hit = 1.0 if relevant.intersection(top) else 0.0
    rr = next((1.0 / (i + 1) for i, item in enumerate(ranked[:10]) if item in relevant), 0.0)
    return recall, hit, rr


def _phrase_queries(messages: Sequence[Message], count: int) -> list[Query]:
    """Verbatim 8-word spans from messages of 300+ characters, each relevant to its own message."""
    rng = random.Random(5)
    long_ones = [m for m in messages if len(m.text) >= 300]
    queries = []
    for n in range(count):
        message = rng.choice(long_ones)
        words = message.text.split()
        start = rng.randrange(0, len(words) - 8)
        queries.append(Query(f"p{n}", "phrase", frozenset({message.id}), " ".join(words[start:start + 8])))
    return queries


class Retrieval:
    """The four rankings of one query, over one indexed corpus."""

    def __init__(self, messages: Sequence[Message], embedder: Embedder) -> None:
        self.conn = _fts_table(messages)
        self.embedder = embedder
        chunk_texts: list[str] = []
        self.owners: list[int] = []
        for i, message in enumerate(messages):
            for chunk in split_into_chunks(message.text):
                chunk_texts.append(chunk.text)
                self.owners.append(i)
        started = time.perf_counter()
        vectors = embedder.embed(chunk_texts)
        self.embed_seconds = time.perf_counter() - started
        self.chunk_count = len(chunk_texts)
        self.index: VectorIndex[int] = VectorIndex()
        self.index.add_many(enumerate(vectors))

    def rankings(self, text: str) -> dict[str, list[int]]:
        """Message positions, best first, per method."""
        fts = _fts_tiered(self.conn, text)
        hits = self.index.top_k(self.embedder.embed_one(text), CANDIDATES)
        vector = rank_owners((hit.id for hit in hits), self.owners.__getitem__)
        every = every_word_search(lambda expression, limit: _fts(self.conn, expression)[:limit], text, CANDIDATES)
        fused = [hit.id for hit in reciprocal_rank_fusion({"fts": every, "vector": vector})]
        fused_all = [hit.id for hit in reciprocal_rank_fusion({"fts": fts, "vector": vector})]
        return {"fts-and": _fts(self.conn, fts_match_expression(text)), "fts": fts, "vector": vector,
                "fused": fused, "fused-all": fused_all}


def _evaluate(retrieval: Retrieval, queries: Sequence[Query], position: dict[str, int],
              messages: Sequence[Message], verbose: bool) -> dict[str, dict[str, list[tuple[float, float, float]]]]:
    """Per kind ("all" included), per method: the metrics of each query."""
    results: dict[str, dict[str, list[tuple[float, float, float]]]] = {}
    for query in queries:
        relevant = {position[r] for r in query.relevant}
        for name, ranked in retrieval.rankings(query.text).items():
            metrics = _metrics(ranked, relevant)
            for kind in (query.kind, "all"):
                results.setdefault(kind, {}).setdefault(name, []).append(metrics)
            if verbose and name == "fused" and metrics[0] < 1.0:
                got = [messages[i].id for i in ranked[:TOP]]
                print(f"  {query.id} {query.text!r}: wanted {sorted(query.relevant)}, got {got}")
    return results


def _table(title: str, per_method: dict[str, list[tuple[float, float, float]]]) -> dict[str, float]:
    count = len(next(iter(per_method.values())))
    print(f"\n{title} ({count} queries)")
    print(f"  {'method':<9} {'recall@5':>9} {'hit@5':>7} {'MRR@10':>7}")
    recalls = {}
    for name, rows in per_method.items():
        recalls[name] = statistics.fmean(r[0] for r in rows)
        print(f"  {name:<9} {recalls[name]:>9.3f} {statistics.fmean(r[1] for r in rows):>7.3f} "
              f"{statistics.fmean(r[2] for r in rows):>7.3f}")
    return recalls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print the fused misses of each query")
    args = parser.parse_args()

    messages = load_conversations()
    queries = load_queries()
    position = {m.id: i for i, m in enumerate(messages)}
    embedder = Embedder()
    embedder.load()
    retrieval = Retrieval(messages, embedder)
    print(f"labelled set: {len(messages)} messages → {retrieval.chunk_count} chunks; "
          f"model load {embedder.load_seconds:.2f} s; embedding the corpus {retrieval.embed_seconds:.1f} s "
          f"({retrieval.chunk_count / retrieval.embed_seconds:.1f} chunks/s)")

    results = _evaluate(retrieval, queries, position, messages, args.verbose)
    for kind in sorted(k for k in results if k != "all"):
        _table(f"{kind} queries", results[kind])
    overall = _table("all hand-written queries", results["all"])
    phrases = _evaluate(retrieval, _phrase_queries(messages, 120), position, messages, False)
    _table("generated verbatim phrases (not part of the goal)", phrases["all"])

    best_single = max(overall["fts"], overall["vector"])
    print(f"\nfused / best single (recall@5, hand-written): {overall['fused'] / best_single:.2f}×; "
          f"fts recall@5 {overall['fts']:.3f} against {overall['fts-and']:.3f} for the all-words expression")
    ok = overall["fused"] > overall["fts"] and overall["fused"] > overall["vector"]
    print("PASS: fused beats both" if ok else "FAIL: fused does not beat both fts and vector")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
