"""Opening the app: the CPU and wall time of one app start, as the app tests and `tunaflow PATH` pay it.

Run: .venv/bin/python bench/app_start.py [--opens 8] [--rounds 3] [--seed approval|empty] [--before OTHER/src]
     .venv/bin/python bench/app_start.py --profile [--opens 6] [--top 40]

Each case runs in a fresh interpreter (so the first open pays what a user's `tunaflow PATH` pays: the
first CSS parse, the first widget classes' set-up) that opens the app ``--opens`` times in a row, as a
test process does: Textual's Pilot (``run_test`` at 120×40) until the app is idle for the first time
(``pilot.pause()``), then closed. The app is tunaflow's, built as the app tests build it
(``build_app`` on a ``WorkflowRuntime`` over a copy of the demo project, no embedding worker), the
demo Architect's plan for a request waiting for approval (``--seed empty``: no conversation yet); the
baseline is a minimal Textual app (Header, Static, Footer) opened the same way in the same run.

Per case, the median over the rounds (with min–max):

* **first open**: CPU (user + system of the process) and wall time of the first open;
* **next opens**: CPU and wall per open of the others (what every app test pays after the first);
* counts per open (next opens): CSS sources parsed, style applications to a node, recomposes, key
  footer composes;
* the load average (1 min) when the case ran.

Ratios: tunaflow's figures over the minimal app's, and with ``--before OTHER/src`` (another checkout's
``src``, e.g. ``git archive`` of an older commit unpacked in /tmp) this checkout's over the other's
(``--app-path SRC`` measures another folder's app in place of this checkout's),
the cases interleaved round by round so a busy moment of a shared machine hits each alike.

``--profile`` opens tunaflow's app ``--opens`` times in this process under cProfile and prints the top
functions by cumulative time (``--top``), after the figures of one open outside the profiler.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

SIZE = (120, 40)
REQUEST = "Add a word frequency report"


# ----------------------------------------------------------------------------- in the child process
def _count_calls(counts: Counter[str]) -> None:
    """Count the calls that make an app start expensive (wrapping them; a few µs each)."""
    from textual.css import stylesheet
    from textual.css.stylesheet import Stylesheet
    from textual.widget import Widget

    from tunaflow_tui.widgets.key_footer import KeyFooter

    def wrap(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[label] += 1
            return original(*args, **kwargs)

        setattr(owner, name, counted)

    wrap(stylesheet, "parse", "CSS sources parsed")
    wrap(Stylesheet, "apply", "style applications")
    wrap(Widget, "recompose", "recomposes")
    wrap(KeyFooter, "compose", "key footer composes")


def _minimal_app() -> Any:
    from textual.app import App, ComposeResult
    from textual.widgets import Footer, Header, Static

    class Minimal(App[None]):
        BINDINGS: ClassVar[list[tuple[str, str, str]]] = [("q", "quit", "Quit")]

        def compose(self) -> ComposeResult:
            yield Header()
            yield Static("hello from a minimal app")
            yield Footer()

    return Minimal()


def _settings(project: Path) -> Any:
    """Every role on the demo engine, no pacing, no bell (as the app tests' ``demo_settings``)."""
    from tunaflow_tui.core.settings import load_settings

    settings = load_settings(project, force_demo=True)
    demo = settings.engines["demo"].model_copy(update={"demo_delay_s": 0.0})
    return settings.model_copy(update={"engines": {**settings.engines, "demo": demo},
                                       "ui": settings.ui.model_copy(update={"bell": False})})


def _seeded_project(where: Path, seed: str) -> Path:
    """The demo project (a git repo with a pytest suite), user folders and no embedding worker, as the
    app tests have it; with ``seed == "approval"`` the demo Architect's plan for a request waits for
    approval (its card in the decision dock), written headless before anything is timed."""
    from tunaflow_tui.agents.demo.sample import copy_demo_project
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        os.environ[name] = str(where / name.lower())
    os.environ["TUNAFLOW_MEMORY__EMBEDDINGS"] = "false"
    project = copy_demo_project(where / "textstats")
    if seed == "approval":
        runtime = WorkflowRuntime(project, _settings(project))
        try:
            asyncio.run(runtime.send_user_message(REQUEST))
            [plan] = runtime.store.list_plans()
            assert plan.pending_decision == "approval", plan
        finally:
            runtime.close()
    return project


def _tunaflow_factory(project: Path) -> Callable[[], tuple[Any, Callable[[], None]]]:
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.subcommands.open_command import build_app

    def make() -> tuple[Any, Callable[[], None]]:
        runtime = WorkflowRuntime(project, _settings(project))
        return build_app(runtime, notes=(), cursor_blink=False), runtime.close

    return make


async def _open(make: Callable[[], tuple[Any, Callable[[], None]]]) -> tuple[float, float]:
    """Open one app to its first idle and close it: (CPU seconds, wall seconds)."""
    cpu, wall = time.process_time(), time.perf_counter()
    app, close = make()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
    finally:
        close()
    return time.process_time() - cpu, time.perf_counter() - wall


def child(case: str, opens: int, seed: str) -> dict[str, Any]:
    """Open the app of ``case`` (``minimal`` or ``tunaflow``) ``opens`` times; the figures."""
    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="app-start-") as tmp:
        if case == "minimal":
            def make() -> tuple[Any, Callable[[], None]]:
                return _minimal_app(), lambda: None
        else:
            make = _tunaflow_factory(_seeded_project(Path(tmp), seed))
        first = asyncio.run(_open(make))
        _count_calls(counts)
        rest = [asyncio.run(_open(make)) for _ in range(opens - 1)]
    per = max(1, len(rest))
    return {"first_cpu": first[0], "first_wall": first[1],
            "cpu": statistics.mean(r[0] for r in rest), "wall": statistics.mean(r[1] for r in rest),
            "counts": {k: v / per for k, v in counts.items()}, "load": os.getloadavg()[0]}


# ----------------------------------------------------------------------------- the parent
def run_case(case: str, src: Path, opens: int, seed: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, __file__, "--child", case, "--opens", str(opens), "--seed", seed], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{case} ({src}) failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def spread(values: list[float], scale: float = 1.0, digits: int = 0) -> str:
    numbers = [v * scale for v in values]
    return f"{statistics.median(numbers):.{digits}f} ({min(numbers):.{digits}f}–{max(numbers):.{digits}f})"


def profile(opens: int, top: int, seed: str) -> None:
    with tempfile.TemporaryDirectory(prefix="app-start-") as tmp:
        make = _tunaflow_factory(_seeded_project(Path(tmp), seed))
        cpu, wall = asyncio.run(_open(make))
        print(f"first open, outside the profiler: CPU {cpu * 1000:.0f} ms, wall {wall * 1000:.0f} ms, "
              f"load {os.getloadavg()[0]:.1f}")
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(opens):
            asyncio.run(_open(make))
        profiler.disable()
    print(f"\n{opens} more opens under cProfile, top {top} by cumulative time:")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opens", type=int, default=8, help="app opens per process (the first counted apart)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", default=None, help="also measure the app of this src folder, interleaved")
    parser.add_argument("--app-path", default=None, help="measure the app of this src folder instead of this checkout's")
    parser.add_argument("--profile", action="store_true", help="profile tunaflow's app start in this process")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--seed", choices=("approval", "empty"), default="approval",
                        help="the project opened: a plan waiting for approval (default), or no conversation yet")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, max(2, args.opens), args.seed)))
        return 0
    if args.profile:
        profile(args.opens, args.top, args.seed)
        return 0

    here = Path(args.app_path).resolve() if args.app_path else Path(__file__).resolve().parent.parent / "src"
    cases: list[tuple[str, str, Path]] = [("minimal app", "minimal", here), ("tunaflow", "tunaflow", here)]
    if args.before:
        cases.append(("tunaflow (before)", "tunaflow", Path(args.before).resolve()))
    results: dict[str, list[dict[str, Any]]] = {label: [] for label, _c, _s in cases}
    for round_no in range(1, args.rounds + 1):
        for label, case, src in cases:
            results[label].append(run_case(case, src, args.opens, args.seed))
            r = results[label][-1]
            print(f"round {round_no} {label:18} first {r['first_cpu'] * 1000:5.0f} ms CPU, next "
                  f"{r['cpu'] * 1000:5.0f} ms CPU / {r['wall'] * 1000:5.0f} ms wall, load {r['load']:.1f}",
                  flush=True)

    print(f"\nOpening the app at {SIZE[0]}×{SIZE[1]} to its first idle, {args.opens} opens per process, "
          f"{args.rounds} rounds, project seeded: {args.seed}: median (min–max)\n")
    print("| case | first open CPU ms | first open wall ms | next opens CPU ms | next opens wall ms | load |")
    print("|---|---|---|---|---|---|")
    for label, runs in results.items():
        print(f"| {label} | {spread([r['first_cpu'] for r in runs], 1000)} | "
              f"{spread([r['first_wall'] for r in runs], 1000)} | {spread([r['cpu'] for r in runs], 1000)} | "
              f"{spread([r['wall'] for r in runs], 1000)} | {spread([r['load'] for r in runs], digits=1)} |")
    labels = sorted({k for runs in results.values() for r in runs for k in r["counts"]})
    print("\nCalls per open (next opens, median):\n")
    print("| case | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 1) + "|")
    for label, runs in results.items():
        print(f"| {label} | " + " | ".join(f"{statistics.median(r['counts'].get(k, 0) for r in runs):.0f}"
                                           for k in labels) + " |")

    def ratio(label: str, other: str, key: str) -> str:
        return f"{statistics.median(r[key] for r in results[label]) / statistics.median(r[key] for r in results[other]):.2f}×"

    print("\nRatios (medians):")
    print(f"  tunaflow / minimal app: first open CPU {ratio('tunaflow', 'minimal app', 'first_cpu')}, "
          f"next opens CPU {ratio('tunaflow', 'minimal app', 'cpu')}")
    if args.before:
        print(f"  tunaflow / before: first open CPU {ratio('tunaflow', 'tunaflow (before)', 'first_cpu')}, "
              f"next opens CPU {ratio('tunaflow', 'tunaflow (before)', 'cpu')}, "
              f"next opens wall {ratio('tunaflow', 'tunaflow (before)', 'wall')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
