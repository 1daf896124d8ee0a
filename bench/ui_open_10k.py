"""Opening a 10,000-message conversation: time to first frame and memory, vs a minimal Textual app.

Run: .venv/bin/python bench/ui_open_10k.py
Targets: first frame ≤ 1.5× the minimal app; opening 10k ≤ +150 ms and ≤ +150 MB vs an empty chat.
Each case runs in a fresh interpreter so RSS figures do not leak between cases.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

CASE = r"""
import asyncio, json, resource, sys, time
started = time.perf_counter()
from textual.app import App
from textual.widgets import Static

def rss_mb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

kind = sys.argv[1]
if kind == "minimal":
    class Minimal(App[None]):
        def compose(self):
            yield Static("hello")
    app = Minimal()
else:
    from tunaflow_tui.app import TunaflowApp
    from tunaflow_tui.views.chat import ListMessageSource, MessageView
    count = 10_000 if kind == "tunaflow-10k" else 0
    messages = [MessageView(i, "user" if i % 2 else "assistant", "You" if i % 2 else "Architect · claude",
                            f"Message {i}: some **markdown** with `code` and a list\n\n- one\n- two")
                for i in range(1, count + 1)]
    class Controller:
        source = ListMessageSource(messages)
        def attach(self, app): pass
        def message_source(self, cid): return self.source
        def recipient(self, cid): return "Architect (claude)"
        def send(self, cid, text): pass
        def retry(self, cid, mid): pass
    app = TunaflowApp(Controller(), cursor_blink=False)
before = rss_mb()
async def main():
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        first_frame = time.perf_counter() - started
        print(json.dumps({"first_frame_ms": first_frame * 1000, "rss_mb": rss_mb(), "rss_before_app_mb": before}))
asyncio.run(main())
"""


def run_case(kind: str, repeats: int = 3) -> dict[str, float]:
    best: dict[str, float] | None = None
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", CASE, kind], capture_output=True, text=True, check=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        if best is None or result["first_frame_ms"] < best["first_frame_ms"]:
            best = result
    assert best is not None
    return best


def main() -> None:
    started = time.perf_counter()
    minimal = run_case("minimal")
    empty = run_case("tunaflow-empty")
    big = run_case("tunaflow-10k")
    print(f"{'case':<18}{'first frame (ms)':>18}{'RSS (MB)':>12}")
    for name, result in (("minimal textual", minimal), ("tunaflow empty", empty), ("tunaflow 10k", big)):
        print(f"{name:<18}{result['first_frame_ms']:>18.0f}{result['rss_mb']:>12.1f}")
    print(f"tunaflow empty / minimal first frame: {empty['first_frame_ms'] / minimal['first_frame_ms']:.2f}x"
          " (target ≤ 1.5x)")
    print(f"10k vs empty: +{big['first_frame_ms'] - empty['first_frame_ms']:.0f} ms (target ≤ +150 ms), "
          f"+{big['rss_mb'] - empty['rss_mb']:.1f} MB (target ≤ +150 MB)")
    print(f"(best of 3 fresh processes each; bench took {time.perf_counter() - started:.1f}s)")


if __name__ == "__main__":
    main()
