"""The app's memory with the embedding model in a worker process: RSS, first frame, search after idle.

Run: .venv/bin/python bench/memory_rss.py [--sizes 10000,100000] [--backfill-seconds 20] [--queries 40]

Everything the app does runs as users run it, ``tunaflow PATH`` in tmux (``tmux_term.py``), on git
projects whose main conversation holds 10,000 and 100,000 realistic Markdown messages
(``ui_open_10k.fill``), next to a minimal Textual app (Header, Static, Footer) measured in the same
run: the baseline of every RSS and first-frame ratio.

* **during the first backfill**: the project has no vectors yet; the app opens, its indexer has the
  embedding worker embed the messages, and the app's RSS is sampled every 0.5 s for
  ``--backfill-seconds`` (most seen), as is the worker's.
* **after the backfill**: embedding 100,000 messages takes hours, so every message still without
  vectors then gets chunks whose vectors are real embeddings of a pool of the project's own
  messages plus noise (search cost does not depend on what the vectors mean). The app opens again;
  RSS once the newest message shows, and after a search by meaning (ctrl+f, words, the results).
* **first frame**: default settings against ``[memory] embeddings = false`` (same project).
* **worker**: its RSS with the model and the 100k index loaded, and how long after its last job it
  exits (the release of its memory), with the default idle time.
* **search after idle**: ``ProjectMemory.search`` from this process (a shell command's path) once
  the worker has exited: the first query pays the worker's start, model load and index read; then
  hybrid p50/p95 over ``--queries`` warm queries, against the same queries with the model and the
  index in this process (the in-process baseline, run last so it cannot help the worker's figures).

Targets: app RSS ≤ 150 MB at 10k and 100k, during the backfill too; worker memory released within
60 s of its last job; first frame (default) ≤ first frame (embeddings off); first query after idle
≤ 1 s; hybrid p95 ≤ 15 ms at 100k chunks.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tmux_term import Terminal, env_for
from ui_open_10k import NEWEST, fill

MINIMAL_APP = """from textual.app import App
from textual.widgets import Footer, Header, Static


class Minimal(App[None]):
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self):
        yield Header()
        yield Static("hello from a minimal app")
        yield Footer()


Minimal().run()
"""
QUERIES = ["how does the counter handle unicode input", "make the command line faster on big files",
           "where is the cache of word frequencies kept", "tests for empty files and stdin",
           "what does the report print for the top words", "explain the tokenizer change"]


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time ``pid`` has used (s)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def worker_pid(project: Path) -> int | None:
    """The pid of the project's embedding worker, if one is running (never starts one)."""
    import socket as socket_module

    from tunaflow_tui.core.memory.worker_protocol import receive_frame, send_frame, socket_path

    conn = socket_module.socket(socket_module.AF_UNIX, socket_module.SOCK_STREAM)
    try:
        conn.connect(str(socket_path(project.resolve() / ".tunaflow")))
        send_frame(conn, {"op": "hello"})
        answer = receive_frame(conn)
        return None if answer is None or not answer[0].get("ok") else int(answer[0]["pid"])
    except OSError:
        return None
    finally:
        conn.close()


def shows(text: str):  # type: ignore[no-untyped-def]
    return lambda lines: any(text in line for line in lines)


def open_app(term: Terminal, project: Path, env: dict[str, str]) -> tuple[float, float]:
    """Start ``tunaflow PATH``: (first frame s, newest shown s)."""
    import shutil

    tunaflow = shutil.which("tunaflow", path=str(Path(sys.executable).parent)) or "tunaflow"
    started = term.run([tunaflow, str(project)], env)
    frame = term.wait_for(shows("Message…"), 60)
    newest = term.wait_for(shows(NEWEST), 180)
    assert frame is not None and newest is not None, "tunaflow never drew the conversation"
    term.wait_for(lambda lines: not any("Opening project" in line for line in lines), 60)
    return frame - started, newest - started


def search_in_app(term: Terminal, words: str) -> float:
    """ctrl+f, type ``words``, wait for the hits: seconds from the last key to the results."""
    term.send("C-f")
    term.wait_for(shows("Type to search."), 10)
    sent = term.send(words, literal=True)
    found = term.wait_for(lambda lines: any("found." in line or "No messages match." in line for line in lines), 60)
    term.send("Escape")
    return -1.0 if found is None else found - sent


def seed_vectors(project: Path, pool_size: int = 64) -> tuple[int, float]:
    """Give every message still without chunks chunks with near-real vectors; (chunks written, seconds)."""
    import numpy as np

    from tunaflow_tui.core.memory.chunks import split_into_chunks
    from tunaflow_tui.core.memory.embedder import Embedder
    from tunaflow_tui.core.memory.model_files import MODEL_ID

    started = time.perf_counter()
    db = sqlite3.connect(project / ".tunaflow" / "state.db")
    rows = db.execute("SELECT m.id, m.content FROM messages m WHERE m.status = 'done' AND NOT EXISTS "
                      "(SELECT 1 FROM message_chunks c WHERE c.message_id = m.id)").fetchall()
    embedder = Embedder()
    pool = embedder.embed([content[:800] for _id, content in rows[:pool_size]])
    rng = np.random.default_rng(7)
    written = 0
    batch = []
    for message_id, content in rows:
        for chunk in split_into_chunks(content):
            a, b = pool[rng.integers(len(pool))], pool[rng.integers(len(pool))]
            vector = (a + 0.5 * b + rng.normal(0, 0.05, a.shape)).astype("<f4")
            vector /= np.linalg.norm(vector)
            batch.append((message_id, chunk.index, chunk.start, chunk.end, MODEL_ID, vector.tobytes()))
            written += 1
    db.executemany("INSERT INTO message_chunks (message_id, chunk_index, start_offset, end_offset, model_id, "
                   "vector) VALUES (?, ?, ?, ?, ?, ?)", batch)
    db.commit()
    db.close()
    return written, time.perf_counter() - started


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure_project(term: Terminal, project: Path, env: dict[str, str], env_off: dict[str, str],
                    backfill_seconds: float, frame_rounds: int) -> dict[str, float]:
    out: dict[str, float] = {}
    # ---- during the first backfill
    out["frame_on_cold"], out["newest_cold"] = open_app(term, project, env)
    app = term.pid()
    deadline = time.perf_counter() + backfill_seconds
    peak_app = peak_worker = 0.0
    while time.perf_counter() < deadline:
        peak_app = max(peak_app, rss_mb(app))
        pid = worker_pid(project)
        if pid is not None:
            peak_worker = max(peak_worker, rss_mb(pid))
        time.sleep(0.5)
    out["rss_app_backfill"], out["rss_worker_backfill"] = peak_app, peak_worker
    with sqlite3.connect(project / ".tunaflow" / "state.db") as db:
        out["embedded_during"] = db.execute("SELECT COUNT(DISTINCT message_id) FROM message_chunks").fetchone()[0]
    term.run(["true"], env)  # the app quits (its pane is replaced); the worker goes on alone
    pid = worker_pid(project)
    if pid is not None:  # the rest is seeded below: stop the real backfill first
        os.kill(pid, 9)
    out["chunks_seeded"], out["seed_s"] = seed_vectors(project)
    # ---- after the backfill: embeddings off and default, interleaved rounds (medians)
    frames_off, frames_on = [], []
    for _round in range(frame_rounds):
        frames_off.append(open_app(term, project, env_off)[0])
        out["rss_app_off"] = rss_mb(term.pid())
        frames_on.append(open_app(term, project, env)[0])
    out["frame_off"], out["frame_on"] = statistics.median(frames_off), statistics.median(frames_on)
    app = term.pid()
    out["rss_app_open"] = rss_mb(app)
    out["search_in_app_s"] = search_in_app(term, QUERIES[0])
    time.sleep(1.0)
    out["rss_app_after_search"] = rss_mb(app)
    pid = worker_pid(project)
    out["rss_worker_loaded"] = rss_mb(pid) if pid else 0.0
    term.run(["true"], env)
    last_job = time.perf_counter()
    while pid is not None and alive(pid) and time.perf_counter() - last_job < 120:
        time.sleep(0.2)
    out["worker_exit_after_s"] = time.perf_counter() - last_job
    return out


def _search_ms(memory: object, queries: list[str]) -> tuple[float, float]:
    """p50 and p95 in milliseconds of one hybrid search per query, in order."""
    times = []
    for query in queries:
        started = time.perf_counter()
        memory.search(query, mode="hybrid")  # type: ignore[attr-defined]
        times.append(time.perf_counter() - started)
    return pct(times, 0.5) * 1000, pct(times, 0.95) * 1000


def _lean_figures(name: str, memory: object, asked: list[str], project: Path) -> dict[str, float]:
    """Hybrid as retrieval for a pack runs it (its 20 candidates a ranking), and the vector top 50 alone."""
    engine = memory.search_engine  # type: ignore[attr-defined]
    retrieval, nearest = [], []
    for query in asked:
        started = time.perf_counter()
        engine.search(query, mode="hybrid", candidates=20)
        retrieval.append(time.perf_counter() - started)
        vector = engine.query_vector(query)
        started = time.perf_counter()
        engine._nearest(vector, 50)
        nearest.append(time.perf_counter() - started)
    return {f"{name}_retrieval_p50_ms": pct(retrieval, 0.5) * 1000, f"{name}_retrieval_p95_ms": pct(retrieval, 0.95) * 1000,
            f"{name}_topk_p50_ms": pct(nearest, 0.5) * 1000, f"{name}_topk_p95_ms": pct(nearest, 0.95) * 1000}


def search_figures(project: Path, queries: int) -> dict[str, float]:
    """First query after idle, then warm hybrid p50/p95 (worker), then the in-process baseline."""
    from tunaflow_tui.core.memory.embedder import Embedder
    from tunaflow_tui.core.settings import Settings
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.runtime.memory import ProjectMemory

    rng = random.Random(3)
    asked = [f"{rng.choice(QUERIES)} {rng.choice(['please', 'again', 'now', 'today', 'soon'])}"
             for _ in range(queries)]
    out: dict[str, float] = {}
    with Store.open(project) as store:
        memory = ProjectMemory(store, Settings(), lambda _event: None)
        try:
            started = time.perf_counter()
            first = memory.search("why is the report slow for large inputs", mode="hybrid")
            out["first_after_idle_s"] = time.perf_counter() - started
            pid = worker_pid(project)
            out["worker_start_cpu_s"] = cpu_seconds(pid) if pid else 0.0
            assert first.mode == "hybrid", first.note
            out["worker_p50_ms"], out["worker_p95_ms"] = _search_ms(memory, asked)
            # the same texts again: their vectors are remembered, so no embedding
            out["worker_p50_noembed_ms"], out["worker_p95_noembed_ms"] = _search_ms(memory, asked)
            out.update(_lean_figures("worker", memory, asked, project))
        finally:
            memory.close()
        local = ProjectMemory(store, Settings(), lambda _event: None, embedder=Embedder())
        try:
            local.search("warm up the model and the index", mode="hybrid")
            out["local_p50_ms"], out["local_p95_ms"] = _search_ms(local, asked)
            out["local_p50_noembed_ms"], out["local_p95_noembed_ms"] = _search_ms(local, asked)
            out.update(_lean_figures("local", local, asked, project))
        finally:
            local.close()
        # As the app does it: the search view's opening wakes the worker; the query comes a second later.
        woken = ProjectMemory(store, Settings(), lambda _event: None)
        try:
            deadline = time.perf_counter() + 90
            while worker_pid(project) is not None and time.perf_counter() < deadline:
                time.sleep(0.5)  # until the worker has left (idle)
            woken.wake()
            time.sleep(1.0)  # the user types the query
            started = time.perf_counter()
            assert woken.search("why is the report slow for large inputs", mode="hybrid").mode == "hybrid"
            out["first_after_wake_s"] = time.perf_counter() - started
        finally:
            woken.close()
    return out


def minimal_app(term: Terminal, script: Path, env: dict[str, str]) -> tuple[float, float]:
    started = term.run([sys.executable, str(script)], env)
    frame = term.wait_for(shows("hello from a minimal app"), 60)
    assert frame is not None, "the minimal app never drew"
    time.sleep(0.5)
    return frame - started, rss_mb(term.pid())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--backfill-seconds", type=float, default=20.0)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--frame-rounds", type=int, default=3, help="interleaved opens, embeddings off and on")
    args = parser.parse_args()
    began = time.perf_counter()
    results: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="tunaflow-bench-") as tmp:
        root = Path(tmp)
        env = env_for(str(root))
        off_root = root / "off"
        env_off = env_for(str(off_root))
        config = off_root / "config" / "tunaflow" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text("[memory]\nembeddings = false\n", encoding="utf-8")
        script = root / "minimal_app.py"
        script.write_text(MINIMAL_APP)
        with Terminal(120, 40) as term:
            minimal_frame, minimal_rss = minimal_app(term, script, env)
            for size in [int(s) for s in args.sizes.split(",") if s]:
                project = root / f"c{size}"
                print(f"wrote {size:,} messages in {fill(project, size):.1f} s", file=sys.stderr)
                results[size] = measure_project(term, project, env, env_off, args.backfill_seconds,
                                                args.frame_rounds)
                results[size].update(search_figures(project, args.queries))
                print(f"{size:,} done: {results[size]}", file=sys.stderr)
            minimal_frame_2, minimal_rss_2 = minimal_app(term, script, env)
    minimal_frame = min(minimal_frame, minimal_frame_2)
    minimal_rss = max(minimal_rss, minimal_rss_2)
    print(f"minimal Textual app (Header, Static, Footer): first frame {minimal_frame * 1000:.0f} ms, "
          f"RSS {minimal_rss:.1f} MB")
    for size, r in results.items():
        print(f"\n== {size:,} messages ({int(r['chunks_seeded']):,} chunks seeded after "
              f"{int(r['embedded_during']):,} messages embedded for real in {args.backfill_seconds:.0f} s)")
        print(f"app RSS during the first backfill (most seen): {r['rss_app_backfill']:.1f} MB "
              f"({r['rss_app_backfill'] / minimal_rss:.2f}x minimal; target ≤ 150 MB); "
              f"worker {r['rss_worker_backfill']:.1f} MB")
        print(f"app RSS after, opened: {r['rss_app_open']:.1f} MB; after a search by meaning "
              f"({r['search_in_app_s'] * 1000:.0f} ms to the hits): {r['rss_app_after_search']:.1f} MB "
              f"({r['rss_app_after_search'] / minimal_rss:.2f}x minimal); embeddings off: {r['rss_app_off']:.1f} MB")
        print(f"worker RSS with the model and the index: {r['rss_worker_loaded']:.1f} MB; exited "
              f"{r['worker_exit_after_s']:.1f} s after its last job (target ≤ 60 s)")
        print(f"first frame (median of {args.frame_rounds} interleaved): default {r['frame_on'] * 1000:.0f} ms, "
              f"embeddings off {r['frame_off'] * 1000:.0f} ms "
              f"({r['frame_on'] / r['frame_off']:.2f}x); first backfill open {r['frame_on_cold'] * 1000:.0f} ms; "
              f"minimal {minimal_frame * 1000:.0f} ms")
        print(f"search: first query 1 s after the search view woke the idle worker "
              f"{r['first_after_wake_s'] * 1000:.0f} ms (target ≤ 1000)")
        print(f"search: first query after the worker was idle {r['first_after_idle_s'] * 1000:.0f} ms "
              f"(target ≤ 1000; the worker's CPU time to get there {r['worker_start_cpu_s']:.2f} s); hybrid warm p50 {r['worker_p50_ms']:.1f} ms p95 {r['worker_p95_ms']:.1f} ms "
              f"(target ≤ 15); in-process baseline p50 {r['local_p50_ms']:.1f} p95 {r['local_p95_ms']:.1f} ms "
              f"({r['worker_p95_ms'] / r['local_p95_ms']:.2f}x)")
        print(f"search without the query's embedding (its vector remembered): worker p50 "
              f"{r['worker_p50_noembed_ms']:.1f} p95 {r['worker_p95_noembed_ms']:.1f} ms; in-process p50 "
              f"{r['local_p50_noembed_ms']:.1f} p95 {r['local_p95_noembed_ms']:.1f} ms "
              f"({r['worker_p95_noembed_ms'] / r['local_p95_noembed_ms']:.2f}x)")
        print(f"hybrid as retrieval runs it (20 candidates a ranking; vector remembered): worker p50 "
              f"{r['worker_retrieval_p50_ms']:.1f} p95 {r['worker_retrieval_p95_ms']:.1f} ms; in-process p50 "
              f"{r['local_retrieval_p50_ms']:.1f} p95 {r['local_retrieval_p95_ms']:.1f} ms "
              f"({r['worker_retrieval_p95_ms'] / r['local_retrieval_p95_ms']:.2f}x); vector top 50 alone: worker "
              f"p50 {r['worker_topk_p50_ms']:.1f} p95 {r['worker_topk_p95_ms']:.1f} ms, in-process p50 "
              f"{r['local_topk_p50_ms']:.1f} p95 {r['local_topk_p95_ms']:.1f} ms")
    print(f"\nbench took {time.perf_counter() - began:.0f} s; load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
