"""Benchmark: wall time of a roundtable round, deliberative against sequential, with real subprocesses.

Each seat is a real process — the scripted stand-in for the claude CLI from the tests, speaking
claude's stream-json — that answers after a set delay (3 seats: 0.6/1.2/1.8 s; 5 seats: 0.4 to
2.0 s). Baselines measured in the same run: each seat alone in a one-seat roundtable. Goals: a
deliberative round takes at most 1.1 × the slowest seat alone; a sequential one about the sum of
the seats alone. Cases are interleaved per repeat; figures are medians with their spread.

Run:  .venv/bin/python bench/roundtable_wall_time.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.roundtable.seats import RoundtableSetup, Seat
from tunaflow_tui.core.settings import EngineConfig, Settings
from tunaflow_tui.runtime.roundtable import Roundtable
from tunaflow_tui.runtime.runtime import WorkflowRuntime

FAKE = Path(__file__).resolve().parents[1] / "tests" / "runtime" / "fakes" / "scripted_agent.py"
LINEUPS = {3: (0.6, 1.2, 1.8), 5: (0.4, 0.8, 1.2, 1.6, 2.0)}


def _prepare(root: Path) -> Settings:
    bin_dir = root / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(f"#!/bin/sh\nexport TUNAFLOW_FAKE_AS=claude\nexec {sys.executable} {FAKE} \"$@\"\n")
    claude.chmod(0o755)
    script = {}
    for delays in LINEUPS.values():
        for i, delay in enumerate(delays):
            name = f"s{i}_{int(delay * 1000)}"
            script[f"seat:{name}"] = [{"text": f"{name} starts. It ends here.", "pause_after": {"starts.": delay}}]
    (root / "script.json").write_text(json.dumps(script))
    os.environ.update(TUNAFLOW_FAKE_SCRIPT=str(root / "script.json"), TUNAFLOW_FAKE_STATE=str(root / "state.json"))
    os.environ.pop("TUNAFLOW_FAKE_LOG", None)
    engine = EngineConfig(name="fake", type="claude", command=str(claude), timeout_idle_s=60, timeout_total_s=120)
    return Settings(engines={"fake": engine, "demo": EngineConfig(name="demo")})


def _seats(delays: tuple[float, ...]) -> tuple[Seat, ...]:
    return tuple(Seat(f"s{i}_{int(d * 1000)}", "fake") for i, d in enumerate(delays))


async def _round(rt: WorkflowRuntime, seats: tuple[Seat, ...], mode: str, embedder: Embedder) -> float:
    table = Roundtable.convene(rt, RoundtableSetup(topic="How should we cache the catalogue?", seats=seats,
                                                   mode=mode), embedder=embedder)
    started = time.perf_counter()
    result = await table.run_round(prefetch=False)
    elapsed = time.perf_counter() - started
    if result.failed:
        raise SystemExit(f"a seat failed: {result.failed[0].error}")
    return elapsed


async def _measure(project: Path, settings: Settings, repeats: int) -> dict[str, list[float]]:
    embedder = Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(project / "none.onnx")})  # rounds of one: no recall
    rt = WorkflowRuntime(project, settings, embedder=embedder)
    figures: dict[str, list[float]] = {}
    try:
        for _ in range(repeats):
            for size, delays in LINEUPS.items():
                seats = _seats(delays)
                for seat in seats:
                    figures.setdefault(f"{size}:alone:{seat.name}", []).append(
                        await _round(rt, (seat,), "sequential", embedder))
                for mode in ("deliberative", "sequential"):
                    figures.setdefault(f"{size}:{mode}", []).append(await _round(rt, seats, mode, embedder))
    finally:
        rt.close()
    return figures


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}–{max(values):.2f})"


def main() -> int:
    """Measure and print the figures with their ratios to the baselines."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        settings = _prepare(root)
        figures = asyncio.run(_measure(project, settings, args.repeats))
    for size, delays in LINEUPS.items():
        alone = {seat.name: statistics.median(figures[f"{size}:alone:{seat.name}"]) for seat in _seats(delays)}
        slowest, total = max(alone.values()), sum(alone.values())
        deliberative = statistics.median(figures[f"{size}:deliberative"])
        sequential = statistics.median(figures[f"{size}:sequential"])
        print(f"{size} seats (answer delays {', '.join(f'{d:.1f}' for d in delays)} s)")
        print("  each seat alone (baseline): " + ", ".join(f"{name} {value:.2f} s" for name, value in alone.items()))
        print(f"  deliberative: {_spread(figures[f'{size}:deliberative'])} = {deliberative / slowest:.2f} × the "
              "slowest seat alone (goal ≤ 1.10)")
        print(f"  sequential:   {_spread(figures[f'{size}:sequential'])} = {sequential / total:.2f} × the sum of "
              "the seats alone (goal ≈ 1.00)")
        ok = ok and deliberative <= 1.1 * slowest
    print("goals met" if ok else "goals NOT met")
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
