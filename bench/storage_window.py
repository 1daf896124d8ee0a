"""Benchmark: opening a store and fetching the chat window vs loading a whole long conversation.

Creates a project with 10,000 messages of mixed sizes, then times (median of several runs):
  * Store.open on the existing database,
  * the last 50-message window (what the chat view shows first),
  * all 10,000 messages (the baseline a naive view would load).

Run:  .venv/bin/python bench/storage_window.py [--messages N] [--repeat R]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.turns import Usage


def _timed(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _populate(project: Path, count: int) -> float:
    rng = random.Random(7)
    words = ["the", "plan", "review", "branch", "검토", "계획", "test", "diff", "worktree", "merge", "로그인", "error", "cache"]
    start = time.perf_counter()
    with Store.open(project) as store:
        for block in range(0, count, 500):
            with store.transaction():
                for n in range(block, min(block + 500, count)):
                    size = rng.choice((5, 40, 200, 1500))  # short replies to long code answers
                    text = " ".join(rng.choice(words) for _ in range(size))
                    msg = store.add_message("main", "assistant" if n % 2 else "user", text,
                                            persona="Developer" if n % 2 else None)
                    if n % 2:
                        store.update_message(msg.id, usage=Usage(size * 2, size, 0, None))
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        build = _populate(project, args.messages)
        size_mb = (project / ".tunaflow" / "state.db").stat().st_size / 1e6
        print(f"populated {args.messages} messages in {build:.2f} s (database {size_mb:.1f} MB)")

        open_s = _timed(lambda: Store.open(project).close(), args.repeat)
        with Store.open(project) as store:
            store.list_messages("main", limit=50)  # warm the reader connection
            window_s = _timed(lambda: store.list_messages("main", limit=50), args.repeat)
            all_s = _timed(lambda: store.list_messages("main", limit=args.messages), args.repeat)
            older_s = _timed(lambda: store.list_messages("main", before_id=args.messages // 2, limit=50),
                             args.repeat)
            assert len(store.list_messages("main", limit=args.messages)) == args.messages

    print(f"open store                 : {open_s * 1000:8.2f} ms")
    print(f"last 50-message window     : {window_s * 1000:8.2f} ms")
    print(f"50 older (mid-history)     : {older_s * 1000:8.2f} ms")
    print(f"all {args.messages} messages (baseline): {all_s * 1000:8.2f} ms")
    print(f"ratio baseline / window    : {all_s / window_s:8.1f}x")
    print(f"open + window vs open + all: {(open_s + window_s) * 1000:.2f} ms vs {(open_s + all_s) * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
