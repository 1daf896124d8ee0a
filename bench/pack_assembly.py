"""Benchmark: assembling the Architect's ContextPack in a 10,000-message conversation with a plan.

A temporary project gets a main conversation of generated engineering messages
(bench/memory_corpus.py), a plan, a few branches, topic summaries of the older part (extractive,
written once by the real compression code) and one vector per chunk (the model embeds a pool of
chunks; each stored vector mixes two pool vectors plus noise, as in search_hybrid.py: search
cost does not depend on what the vectors mean). The model is loaded before timing, as the
background indexer would have done.

Cases, interleaved per round and timed as p50/p95 wall time over the questions, and as process
CPU time (every thread: the embedding runs on onnxruntime's threads and, since it is started first,
on a worker thread beside the pack's other reads). On a shared machine wall time is inflated by
other processes; CPU time much less, so both are printed, with the load average at start and end:
  * baseline: the pack without memory (no retrieval, no compressed memory, no links): project,
    plan, recent turns;
  * full: the same plus retrieval (hybrid: FTS tiers + vectors, fused), compressed memory and links;
  * full, full text only: retrieval before the model is loaded.
Goal: full pack p95 ≤ 50 ms (exit code 1 otherwise).

To compare with another checkout, run the same script with ``PYTHONPATH=OTHER/src`` (the baseline
of bench/RESULTS.md is main's code, run alternately with this tree's in one session).

Run:  .venv/bin/python bench/pack_assembly.py [--messages 10000] [--queries 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from memory_corpus import ConversationGenerator, load_queries

from tunaflow_tui.agents.base import Engine
from tunaflow_tui.core.memory.chunks import split_into_chunks
from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.model_files import MODEL_ID
from tunaflow_tui.core.memory.vectors import vector_to_blob
from tunaflow_tui.core.settings import EngineConfig, Settings
from tunaflow_tui.core.storage.chunk_store import ChunkToSave
from tunaflow_tui.runtime.compression import compress_conversation
from tunaflow_tui.runtime.links import link_similar
from tunaflow_tui.runtime.runtime import WorkflowRuntime

GOAL_P95_MS = 50.0
POOL = 120


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _no_engine(_config: EngineConfig) -> Engine:
    raise RuntimeError("no summarizer engine in the benchmark: extractive summaries")


def _seed(rt: WorkflowRuntime, messages: int, pool: np.ndarray) -> None:
    generator = ConversationGenerator(11)
    rows = []
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        text = generator.question() if role == "user" else generator.message()
        rows.append({"role": role, "content": text, "persona": None if role == "user" else "architect"})
    rt.store.add_messages("main", rows)
    for label in ("spike", "review", "docs"):
        branch = rt.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                        mode="chat", kind="general", label=label)
        rt.store.add_messages(branch.shadow_conversation_id,
                              [{"role": "user", "content": generator.question()},
                               {"role": "assistant", "content": generator.message()}])
    rt.store.create_plan(title="Add a word-frequency report", slug="word-frequency",
                         description=generator.message(), subtasks=[(generator.sentence(), generator.sentence())
                                                                    for _ in range(4)])
    rng = np.random.default_rng(5)
    for message in rt.store.messages_to_embed(MODEL_ID, limit=messages + 100):
        chunks = split_into_chunks(message.content)
        first, second = rng.integers(len(pool), size=2)
        saved = []
        for chunk in chunks:
            vector = pool[first] * 0.6 + pool[second] * 0.4 + rng.standard_normal(pool.shape[1]) * 0.03
            saved.append(ChunkToSave(chunk.index, chunk.start, chunk.end, vector_to_blob(vector)))
        rt.store.save_message_chunks(message.id, message.content, MODEL_ID, saved)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    embedder = Embedder()
    embedder.load()
    pool_gen = ConversationGenerator(99)
    pool = embedder.embed([pool_gen.message()[:800] for _ in range(POOL)])
    questions = [q.text for q in load_queries()][: args.queries // 2]
    question_gen = ConversationGenerator(7)
    questions += [question_gen.question() for _ in range(args.queries - len(questions))]

    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        rt = WorkflowRuntime(project, Settings(), engine_factory=_no_engine, embedder=embedder)
        try:
            started = time.perf_counter()
            _seed(rt, args.messages, pool)
            print(f"seeded {args.messages:,} messages with chunk vectors in {time.perf_counter() - started:.1f} s")
            started = time.perf_counter()
            written = asyncio.run(compress_conversation(rt, "main"))
            print(f"compressed memory: {written} extractive summaries in {time.perf_counter() - started:.1f} s")
            for branch in rt.store.list_branches():
                link_similar(rt, branch.shadow_conversation_id)
            plan = rt.store.list_plans()[0]
            rt.memory.retrieve("warm up", exclude_message_ids=(), limit=1)  # builds the vector index
            full_cfg = rt.settings.context.model_copy()
            bare_cfg = full_cfg.model_copy(update={"retrieved_tokens": 0, "memory_tokens": 0, "links_tokens": 0})

            def build(question: str, cfg: object, loaded: bool) -> Callable[[], object]:
                def run() -> object:
                    rt.settings.context = cfg  # type: ignore[assignment]
                    if not loaded:
                        embedder._session, saved = None, embedder._session  # retrieval as before the model loads
                        try:
                            return rt.context.build(role="architect", conversation_id="main", request=question,
                                                    plan=plan)
                        finally:
                            embedder._session = saved
                    return rt.context.build(role="architect", conversation_id="main", request=question, plan=plan)
                return run

            cases = {"baseline (no memory)": (bare_cfg, True), "full": (full_cfg, True),
                     "full, full text only": (full_cfg, False)}
            timings: dict[str, list[float]] = {name: [] for name in cases}
            cpu: dict[str, list[float]] = {name: [] for name in cases}
            sections: dict[str, list[tuple[str, int, bool]]] = {}
            for round_no in range(args.rounds):
                for qi, question in enumerate(questions):
                    names = list(cases)
                    if (round_no + qi) % 2:
                        names.reverse()
                    for name in names:
                        cfg, loaded = cases[name]
                        run = build(question, cfg, loaded)
                        t0, c0 = time.perf_counter(), time.process_time()
                        pack = run()
                        timings[name].append((time.perf_counter() - t0) * 1000)
                        cpu[name].append((time.process_time() - c0) * 1000)
                        sections[name] = pack.describe()  # type: ignore[attr-defined]
        finally:
            rt.close()
    print(f"load average at end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for name, wall in timings.items():
        print(f"  {name:<24} p50 {_pct(wall, 0.5):7.2f} ms  p95 {_pct(wall, 0.95):7.2f} ms   "
              f"CPU p50 {_pct(cpu[name], 0.5):7.2f} ms  p95 {_pct(cpu[name], 0.95):7.2f} ms")
        print("      sections: " + ", ".join(f"{n} {t}" for n, t, _cut in sections[name]))
    base = timings["baseline (no memory)"]
    full = timings["full"]
    print(f"  full / baseline: p50 {_pct(full, 0.5) / _pct(base, 0.5):.2f}×, "
          f"p95 {_pct(full, 0.95) / _pct(base, 0.95):.2f}×")
    ok = _pct(full, 0.95) <= GOAL_P95_MS
    print(f"  {'PASS' if ok else 'FAIL'}: full pack p95 {_pct(full, 0.95):.1f} ms against the {GOAL_P95_MS:g} ms goal")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
