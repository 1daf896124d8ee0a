"""Benchmark: what a streaming flush costs the database, now that only finished messages are indexed.

A reply of about 40 KB streams in 400 flushes (each stores the whole text so far, as the turn
runner does). Measured in the same run:
  * the streaming flushes (the message is ``streaming``: the full-text index is not touched),
  * the baseline: the same 400 writes to a message that has finished, each of which rewrites its
    full-text entry (what every flush cost while the index followed each flush),
and whether the streaming flushes left the FTS5 index pages exactly as they were.

Run:  .venv/bin/python bench/storage_stream.py [--flushes N] [--repeat R]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from tunaflow_tui.core.storage import Store

WORDS = ["the", "handler", "session", "cookie", "expires", "로그인", "patch", "test", "diff", "cache", "error"]


def _index_pages(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, block FROM messages_fts_data ORDER BY id").fetchall()
    finally:
        conn.close()


def _flushes(store: Store, status: str, texts: list[str]) -> float:
    message = store.add_message("main", "assistant", "" if status == "streaming" else "x", status=status)
    start = time.perf_counter()
    for text in texts:
        store.update_message(message.id, content=text)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flushes", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(3)
    text = ""
    texts: list[str] = []
    for _ in range(args.flushes):
        text += " ".join(rng.choice(WORDS) for _ in range(16)) + "\n"
        texts.append(text)
    streaming: list[float] = []
    finished: list[float] = []
    untouched = True
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        with Store.open(project) as store:
            for _ in range(args.repeat):
                before = _index_pages(store.path)
                streaming.append(_flushes(store, "streaming", texts))
                untouched = untouched and _index_pages(store.path) == before
                finished.append(_flushes(store, "done", texts))
    per_stream = statistics.median(streaming) / args.flushes * 1000
    per_finished = statistics.median(finished) / args.flushes * 1000
    print(f"reply of {len(texts[-1]) / 1000:.1f} KB in {args.flushes} flushes (median of {args.repeat})")
    print(f"streaming flush                 : {per_stream:7.3f} ms")
    print(f"baseline: re-indexing each write: {per_finished:7.3f} ms")
    print(f"ratio baseline / streaming      : {per_finished / per_stream:7.1f}x")
    print(f"index untouched while streaming : {'yes' if untouched else 'NO'}")
    return 0 if untouched else 1


if __name__ == "__main__":
    raise SystemExit(main())
