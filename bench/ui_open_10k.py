"""Opening a project whose conversation holds 10,000 messages: first frame, settle time and memory.

Run: .venv/bin/python bench/ui_open_10k.py [--repeats N]
Targets: first frame ≤ 1.5× a minimal Textual app; opening 10k ≤ +150 ms and ≤ +150 MB vs an empty
project.

Each case runs in a fresh interpreter (so import costs and RSS do not leak between cases) and the
best of ``--repeats`` runs is kept. The tunaflow cases open the app exactly as ``tunaflow PATH``
does (``open_project_app``: the window first, then settings, runtime, store and controller) on a
real project database; the 10k project is filled through the store before timing starts.

The projects are git repositories, as a project worked on with tunaflow is (a folder without git
would open on the offer to run ``git init``). tunaflow's modules are byte-compiled first, as they are
after an installation or the first run (this machine may set ``PYTHONDONTWRITEBYTECODE``, which
would otherwise leave them to be compiled in every case; Textual's are compiled on installation).

* **first frame**: from the start of the case's script (before importing Textual) to the first
  screen the compositor renders; headless mode computes that frame like a terminal would and only
  skips writing it out.
* **settled**: until the app is idle after mounting (the chat mounts the rest of its window right
  after the first frame, the sidebar and pending decisions are filled).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MESSAGES = 10_000

CASE = r"""
import time
started = time.perf_counter()
import asyncio, json, sys
from pathlib import Path
from textual.app import App
from textual.widgets import Static

def rss_mb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0

first_frame = None
_display = App._display
def display(self, screen, renderable):
    global first_frame
    if renderable is not None and first_frame is None:
        first_frame = time.perf_counter() - started
    return _display(self, screen, renderable)
App._display = display

kind = sys.argv[1]
runtime = None
if kind == "minimal":
    class Minimal(App[None]):
        def compose(self):
            yield Static("hello")
    app = Minimal()
else:
    # exactly what `tunaflow PATH` does: the window first, the project opened right after
    from tunaflow_tui.clicmd.open import open_project_app
    project = Path(sys.argv[2])
    app = open_project_app(project, force_demo=True, cursor_blink=False)
    runtime = app.controller

async def main():
    async with app.run_test(size=(120, 40)) as pilot:
        while first_frame is None:
            await asyncio.sleep(0.001)
        if runtime is not None:
            await runtime.wait_opened()
        await pilot.pause()
        await pilot.pause()
        settled = time.perf_counter() - started
        mounted = len(app.query("MessageBlock"))
        print(json.dumps({"first_frame_ms": first_frame * 1000, "settled_ms": settled * 1000,
                          "rss_mb": rss_mb(), "blocks": mounted}))
asyncio.run(main())
if runtime is not None:
    runtime.close()
"""


def fill(project: Path, count: int) -> None:
    """A git project whose main conversation holds ``count`` messages (written through the store)."""
    from tunaflow_tui.core.storage import Store

    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    with Store.open(project) as store, store.transaction():
        for i in range(1, count + 1):
            if i % 2:
                store.add_message("main", "user", f"Message {i}: a question about `textstats`?")
            else:
                store.add_message("main", "assistant",
                                  f"Message {i}: some **markdown** with `code` and a list\n\n- one\n- two",
                                  persona="architect", engine="demo")


def run_case(kind: str, project: Path | None, env: dict[str, str], repeats: int) -> dict[str, float]:
    best: dict[str, float] | None = None
    for _ in range(repeats):
        argv = [sys.executable, "-c", CASE, kind] + ([str(project)] if project else [])
        out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
        if out.returncode != 0:
            raise SystemExit(f"case {kind} failed:\n{out.stderr}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        if best is None or result["first_frame_ms"] < best["first_frame_ms"]:
            best = result
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    started = time.perf_counter()
    import compileall

    import tunaflow_tui

    compileall.compile_dir(Path(tunaflow_tui.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory(prefix="tunaflow-bench-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "XDG_CONFIG_HOME": str(root / "config"), "XDG_DATA_HOME": str(root / "data"),
               "XDG_STATE_HOME": str(root / "state")}
        env = {k: v for k, v in env.items() if not k.startswith("TUNAFLOW_")}
        fill(root / "empty", 0)
        fill_started = time.perf_counter()
        fill(root / "big", MESSAGES)
        fill_s = time.perf_counter() - fill_started
        minimal = run_case("minimal", None, env, args.repeats)
        empty = run_case("tunaflow", root / "empty", env, args.repeats)
        big = run_case("tunaflow", root / "big", env, args.repeats)
    print(f"{'case':<20}{'first frame ms':>16}{'settled ms':>12}{'RSS MB':>9}{'blocks':>8}")
    for name, result in (("minimal textual", minimal), ("tunaflow empty", empty),
                         (f"tunaflow {MESSAGES // 1000}k msgs", big)):
        print(f"{name:<20}{result['first_frame_ms']:>16.0f}{result['settled_ms']:>12.0f}"
              f"{result['rss_mb']:>9.1f}{result.get('blocks', 0):>8}")
    print(f"first frame, tunaflow 10k / minimal: {big['first_frame_ms'] / minimal['first_frame_ms']:.2f}x "
          f"(empty: {empty['first_frame_ms'] / minimal['first_frame_ms']:.2f}x; target ≤ 1.5x)")
    print(f"10k vs empty: first frame +{big['first_frame_ms'] - empty['first_frame_ms']:.0f} ms, "
          f"settled +{big['settled_ms'] - empty['settled_ms']:.0f} ms (target ≤ +150 ms), "
          f"RSS +{big['rss_mb'] - empty['rss_mb']:.1f} MB (target ≤ +150 MB)")
    print(f"(best of {args.repeats} fresh processes each; filling 10k messages took {fill_s:.1f}s; "
          f"bench took {time.perf_counter() - started:.1f}s)")


if __name__ == "__main__":
    main()
