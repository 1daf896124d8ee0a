"""With default settings the app searches by meaning while onnxruntime, tokenizers and the model stay
in the embedding worker: the app's own process never imports them.

The app runs in a process of its own (a Pilot test inside a subprocess), so that the test process's
other tests, which load the model in-process, cannot hide an import.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tunaflow_tui.core.memory.model_files import MODEL_PACKAGE

pytestmark = pytest.mark.embeddings

SUPPORT = Path(__file__).resolve().parents[2] / "support"

APP_SCRIPT = """
import asyncio, sys
from pathlib import Path
from app_harness import demo_settings
from waiting import until
from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.screens.search_screen import SearchScreen
from tunaflow_tui.subcommands.open_command import build_app

project = Path(sys.argv[1])

async def main() -> None:
    runtime = WorkflowRuntime(project, demo_settings(project))  # default settings: embeddings on
    try:
        runtime.store.add_message("main", "user", "How should we store the passwords of our users safely?")
        runtime.store.add_message("main", "user", "Which database ought to hold the invoices?")
        runtime.start_memory()
        app = build_app(runtime, notes=(), cursor_blink=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: runtime.store.embedding_counts("all-MiniLM-L6-v2-int8").remaining == 0
                        or runtime.memory.state().remaining == 0, "the backfill", 120)
            await pilot.press("ctrl+f")
            await until(pilot, lambda: isinstance(app.screen, SearchScreen), "the search view")
            screen = app.screen
            await pilot.press(*"where to persist billing records")
            await until(pilot, lambda: screen.results is not None and not screen.searching
                        and screen.results.query == "where to persist billing records", "the results", 60)
            print("mode", screen.results.mode, "note", repr(screen.results.note))
            print("first", screen.results.hits[0].snippet)
    finally:
        runtime.close()
    print("loaded", sorted(name for name in ("onnxruntime", "tokenizers") if name in sys.modules))

asyncio.run(main())
"""


@pytest.mark.skipif(__import__("importlib").util.find_spec(MODEL_PACKAGE) is None, reason="model not installed")
def test_the_app_searches_by_meaning_without_loading_the_model_itself(demo_project: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SUPPORT), *sys.path])}
    out = subprocess.run([sys.executable, "-c", APP_SCRIPT, str(demo_project)], capture_output=True, text=True,
                         timeout=240, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert "mode hybrid note ''" in lines, out.stdout
    assert "first Which database ought to hold the invoices?" in lines, "found by meaning: no word in common"
    assert lines[-1] == "loaded []", "onnxruntime and tokenizers never entered the app's process"
