"""Benchmark: what round 3 of a roundtable costs with compressed earlier rounds, and what it keeps.

Generates ``--transcripts`` (default 24) design discussions of 3 seats × 3 rounds, each answer about
4,000 characters, from the hand-written engineering threads in bench/data/conversations.txt: a
seat mostly restates and argues its thread's points (sentences of that thread) and drifts into
neighbouring topics now and then (sentences of other threads). One **decisive fact** about the
topic is planted at a random place of a random answer of round 1 or 2.

For round 3 (the first seat, which has no answer of this round before it) it measures, in the
same run:

* **context tokens**: the seat's whole prompt with the earlier rounds compressed (5 chunks scoring
  ≥ 0.2 by cosine to the topic, picked for relevance and novelty (maximal marginal relevance), through the runtime's own ``EarlierRoundsRecall`` and a real
  project store), against the baseline — the same prompt with the full transcript (what a seat gets
  with no model). Goal: ≥ 80% fewer tokens.
* **survival** of the planted fact in what the seat is sent, against a recency baseline of the
  same token budget (the transcript's tail). Goal: ≥ 90%.
* **time to first token of round 2 added by compression**: building round 2's earlier-rounds
  section when round 1's vectors were stored as the answers came in (what the runtime does) and
  when they must be embedded at the start of the round, against building the full transcript.
* **embedding**: chunks/s while embedding the answers, model load time, RSS.

Run:  .venv/bin/python bench/roundtable_compression.py [--transcripts 24] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.model_files import MODEL_ID
from tunaflow_tui.core.roundtable.seat_prompts import (
    EarlierRounds,
    PromptParts,
    SpokenAnswer,
    build_seat_prompt,
    full_transcript,
)
from tunaflow_tui.core.roundtable.seats import Seat
from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime.roundtable_context import EarlierRoundsRecall, StoredAnswer
from tunaflow_tui.runtime.tokens import default_counter

DATA = Path(__file__).resolve().parent / "data" / "conversations.txt"
SEATS = (Seat("ada", "claude", "proposer"), Seat("bram", "codex", "critic"), Seat("chen", "gemini", "judge"))
ANSWER_CHARS = 4_000
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass
class Thread:
    """One hand-written engineering thread: its title and its sentences."""

    title: str
    sentences: list[str]


def load_threads() -> list[Thread]:
    """The threads of the labelled set, each as sentences."""
    threads: list[Thread] = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            threads.append(Thread(line[3:].split(" — ", 1)[-1].strip(), []))
        elif line.startswith("[") and "] " in line and threads:
            text = line.split(":", 1)[1] if ":" in line else line
            threads[-1].sentences += [s.strip() for s in _SENTENCE.split(text) if len(s.strip()) > 30]
        elif threads and threads[-1].sentences and line.strip() and not line.startswith("#"):
            threads[-1].sentences += [s.strip() for s in _SENTENCE.split(line) if len(s.strip()) > 30]
    return [t for t in threads if len(t.sentences) >= 6]


RESTATE = True
"""Whether every answer opens by restating the topic (``--openings restate``, the default)."""


def answer_text(rng: random.Random, own: Thread, others: list[Thread], seat: str) -> str:
    """About 4,000 characters of paragraphs: mostly this thread's points, some drift into others."""
    opening = f"On {own.title}: " if RESTATE else ""
    paragraphs: list[str] = [f"{seat.capitalize()} here. {opening}{rng.choice(own.sentences)}"]
    size = len(paragraphs[0])
    while size < ANSWER_CHARS:
        pool = own.sentences if rng.random() < 0.6 else rng.choice(others).sentences
        paragraph = " ".join(rng.choice(pool) for _ in range(rng.randint(2, 4)))
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)


@dataclass
class Transcript:
    """Three rounds of three answers, the topic and the planted fact."""

    topic: str
    answers: list[SpokenAnswer]
    fact: str
    marker: str


def make_transcript(rng: random.Random, threads: list[Thread], index: int) -> Transcript:
    """One generated discussion with one decisive fact planted in round 1 or 2."""
    own = threads[index % len(threads)]
    others = [t for t in threads if t is not own]
    marker = f"FLAG-{rng.randrange(10_000, 99_999)}"
    fact = (f"The decisive constraint for {own.title} is that the fix must ship behind the feature flag "
            f"{marker} and keep the p99 latency under {rng.randrange(40, 400)} ms, or the rollout is blocked.")
    answers = [SpokenAnswer(seat.name, seat.role, number, answer_text(rng, own, others, seat.name))
               for number in (1, 2, 3) for seat in SEATS]
    target = rng.randrange(0, 6)  # rounds 1 and 2 only: what round 3 must still know
    paragraphs = answers[target].text.split("\n\n")
    paragraphs.insert(rng.randrange(1, len(paragraphs)), fact)
    answers[target] = SpokenAnswer(answers[target].speaker, answers[target].role, answers[target].round,
                                   "\n\n".join(paragraphs))
    return Transcript(f"Design discussion: {own.title}. What should we do, and why?", answers, fact, marker)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def measure(transcripts: list[Transcript], embedder: Embedder) -> dict[str, list[float]]:
    """Every figure per transcript, measured through a real store and the runtime's recall."""
    counter = default_counter()
    figures: dict[str, list[float]] = {k: [] for k in (
        "full_tokens", "compressed_tokens", "section_full", "section_compressed", "survived", "tail_survived",
        "ttft_full_ms", "ttft_prefetched_ms", "ttft_cold_ms", "chunks", "embed_s")}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp))
        try:
            for n, transcript in enumerate(transcripts):
                conversation = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                                   mode="roundtable", kind="general",
                                                   label=f"bench {n}").shadow_conversation_id
                stored = []
                for answer in transcript.answers:
                    message = store.add_message(conversation, "assistant", answer.text, persona=answer.role)
                    stored.append(StoredAnswer(message.id, answer.text, answer))
                round1 = [a for a in stored if a.answer.round == 1]
                earlier = [a for a in stored if a.answer.round < 3]

                # round 2's start: full transcript (baseline), vectors embedded now (cold), vectors stored
                started = time.perf_counter()
                full_transcript([a.answer for a in round1])
                figures["ttft_full_ms"].append((time.perf_counter() - started) * 1000)
                cold = EarlierRoundsRecall(store, embedder)
                started = time.perf_counter()
                await cold.recall(round1, [], transcript.topic, "")
                elapsed = time.perf_counter() - started
                figures["ttft_cold_ms"].append(elapsed * 1000)
                chunks = sum(len(c) for c in store.stored_chunks([a.message_id for a in round1], MODEL_ID).values())
                figures["chunks"].append(chunks)
                figures["embed_s"].append(elapsed)
                warm = EarlierRoundsRecall(store, embedder)
                started = time.perf_counter()
                await warm.recall(round1, [], transcript.topic, "")
                figures["ttft_prefetched_ms"].append((time.perf_counter() - started) * 1000)

                # round 3: the first seat's whole prompt, compressed against full
                warm.store_vectors(earlier)
                compressed = await warm.recall(earlier, [], transcript.topic, "")
                full = EarlierRounds(full_transcript([a.answer for a in earlier]), compressed=False)
                parts = PromptParts(topic=transcript.topic, round=3, participants=tuple(s.name for s in SEATS),
                                    project_context="Project: shop (/srv/shop)\nActive plan: none.")
                with_compression = build_seat_prompt(SEATS[0], _with(parts, compressed))
                without = build_seat_prompt(SEATS[0], _with(parts, full))
                figures["compressed_tokens"].append(counter.count(with_compression))
                figures["full_tokens"].append(counter.count(without))
                section = counter.count(compressed.text)
                figures["section_compressed"].append(section)
                figures["section_full"].append(counter.count(full.text))
                figures["survived"].append(float(transcript.marker in compressed.text))
                tail = counter.truncate(full.text, section, keep="tail")
                figures["tail_survived"].append(float(transcript.marker in tail))
        finally:
            store.close()
    return figures


def _with(parts: PromptParts, earlier: EarlierRounds) -> PromptParts:
    from dataclasses import replace

    return replace(parts, earlier=earlier)


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):,.1f} (min {min(values):,.1f}, max {max(values):,.1f})"


def main() -> int:
    """Generate the transcripts, measure, print figures and the goals."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transcripts", type=int, default=24)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--openings", choices=("restate", "plain"), default="restate",
                        help="whether every answer opens by restating the topic (the harder case)")
    args = parser.parse_args()
    global RESTATE
    RESTATE = args.openings == "restate"
    rng = random.Random(args.seed)
    threads = load_threads()
    transcripts = [make_transcript(rng, threads, i) for i in range(args.transcripts)]
    sizes = [len(a.text) for t in transcripts for a in t.answers]
    print(f"{len(transcripts)} transcripts × 3 seats × 3 rounds ({args.openings} openings); answers {min(sizes):,}–{max(sizes):,} characters")

    rss_before = _rss_mb()
    embedder = Embedder()
    if not embedder.available():
        print(f"no embedding model: {embedder.status().reason}")
        return 1
    started = time.perf_counter()
    embedder.load()
    load_s = time.perf_counter() - started
    figures = asyncio.run(measure(transcripts, embedder))

    full, compressed = figures["full_tokens"], figures["compressed_tokens"]
    saved = [1 - c / f for c, f in zip(compressed, full, strict=True)]
    section_saved = [1 - c / f for c, f in zip(figures["section_compressed"], figures["section_full"], strict=True)]
    survival = statistics.mean(figures["survived"])
    tail_survival = statistics.mean(figures["tail_survived"])
    chunks_per_s = sum(figures["chunks"]) / sum(figures["embed_s"])
    print()
    print("Round 3, first seat — whole prompt tokens")
    print(f"  baseline (full transcript): {_median(full)}")
    print(f"  compressed (top 5 chunks):  {_median(compressed)}")
    print(f"  fewer tokens: median {statistics.median(saved):.1%}, worst {min(saved):.1%}   (goal ≥ 80%)")
    print(f"  earlier-rounds section alone: {statistics.median(section_saved):.1%} fewer (median)")
    print()
    print("Planted decisive fact reaching round 3")
    print(f"  compressed: {survival:.0%} of {len(transcripts)}   (goal ≥ 90%)")
    print(f"  baseline, transcript tail of the same token budget: {tail_survival:.0%}")
    print()
    print("Round 2 start: building what earlier rounds the seats get (ms)")
    print(f"  baseline, full transcript:            {_median(figures['ttft_full_ms'])}")
    print(f"  compressed, vectors stored as answered: {_median(figures['ttft_prefetched_ms'])}")
    print(f"  compressed, embedding at round start: {_median(figures['ttft_cold_ms'])}")
    print()
    print(f"Embedding: {chunks_per_s:,.1f} chunks/s ({statistics.median(figures['chunks']):.0f} chunks per round of "
          f"3 answers); model load {load_s:.2f} s; RSS {rss_before:,.0f} MB before the model, "
          f"{_rss_mb():,.0f} MB at peak")
    ok = statistics.median(saved) >= 0.80 and survival >= 0.90
    print()
    print("goals met" if ok else "goals NOT met")
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
