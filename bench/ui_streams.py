"""Key-to-screen latency in the real app, in a real terminal, while three answers stream: open loop.

Run: .venv/bin/python bench/ui_streams.py [--rounds 3] [--keys 200] [--rate 200] [--gap 0.03]
Target: p95 ≤ 50 ms with three streams.

The app is tunaflow's own ``TunaflowApp`` (its widgets, stylesheet, footer and sidebar) in tmux
(see ``tmux_term.py``), with an in-process controller that streams three answers into the chat at
``--rate`` chunks a second each (a chunk is about a token; a new answer starts after 8,000
characters, so blocks keep being mounted and finished) — what the screen gets while three agents
answer at once. A typist presses a key every ``--gap`` seconds **by the clock** (open loop): keys
are sent on schedule whether or not the previous one is on screen yet, as fingers do, so a slow
frame delays every key typed meanwhile and each of them counts. A key's latency runs from the
moment tmux took it to the first look at the screen (after each write of the app) that shows it
in the composer. Every 40 keys the line is cleared (ctrl+u) and typing goes on.

The baseline is the same app with nothing streaming, measured in the same run; cases are
interleaved (baseline, streams, baseline, …) and the figures pool every round's keys, with the
per-round p95 as the spread. The chunk rate each stream achieved is printed as well: a UI that
falls behind would otherwise look fast by quietly streaming less.

To measure another checkout, pass ``--app-path OTHER/src``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tmux_term import Terminal, env_for
from typing_probe import composer_row, percentile, shown_in_composer, type_keys

APP = r'''
import asyncio, json, os, sys, time
from tunaflow_tui.app import DemoChatController, TunaflowApp
try:
    from tunaflow_tui.viewmodels.chat import MessageView
except ImportError:  # a checkout from before viewmodels/ was named so (--app-path)
    from tunaflow_tui.views.chat import MessageView

STREAMS, RATE, STATS = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
ANSWER = """I looked at `textstats/cli.py` and the tests before changing anything. The command line \
parses its options with **argparse**, and every counter lives in `textstats/counting.py`, so the \
new flag needs one counter and one option. Here is what I changed and why.

## What changed

- `count_words(text)` splits on any run of whitespace, so tabs and newlines count as separators.
- The `--words` option prints the number next to the file name, like `--lines` does.
- Empty input prints `0` instead of raising, which the old code did for `--lines` too.

```python
def count_words(text: str) -> int:
    return len(text.split())
```

The tests cover an empty file, a file with only whitespace, and a Korean sentence \
(한국어 문장도 단어 수를 셉니다) because `str.split` handles Unicode spaces as well. \
All 14 tests pass locally; the run took 0.4 s.

"""
CHUNKS = tuple(ANSWER[i : i + 5] for i in range(0, len(ANSWER), 5))
HISTORY = [MessageView(i, "user" if i % 2 else "assistant", "You" if i % 2 else "Developer · demo",
                       f"Earlier message {i} with some **markdown**\n\n- one\n- two") for i in range(1, 9)]


class Streaming(DemoChatController):
    def attach(self, app):
        super().attach(app)
        self.sent = [0] * STREAMS
        app.call_later(self.start)

    def start(self):
        self.started = time.perf_counter()
        for index in range(STREAMS):
            self.app.run_worker(self.stream(index), group="bench", exit_on_error=False)
        self.app.set_interval(0.5, self.report)

    def report(self):
        rates = [n / (time.perf_counter() - self.started) for n in self.sent]
        # off the event loop (a slow disk must not delay the keys measured), written aside and then
        # renamed (the bench never reads a half-written file)
        self.app.run_worker(asyncio.to_thread(self.write, rates), group="bench-report", exit_on_error=False)

    @staticmethod
    def write(rates):
        with open(STATS + ".part", "w") as out:
            json.dump(rates, out)
        os.replace(STATS + ".part", STATS)

    async def stream(self, index):
        chat = self.app.chat_view
        interval, next_at = 1.0 / RATE, time.perf_counter()
        while True:
            view = MessageView(self.source.next_id(), "assistant", f"Developer · stream {index + 1}", "",
                               "streaming")
            self.source.append(view)
            block = await chat.start_stream(view)
            written, size = [], 0
            while size < 8000:
                chunk = CHUNKS[self.sent[index] % len(CHUNKS)]
                await block.append(chunk)
                written.append(chunk)
                size += len(chunk)
                self.sent[index] += 1
                next_at += interval
                delay = next_at - time.perf_counter()
                await asyncio.sleep(delay if delay > 0 else 0)
            done = MessageView(view.id, view.role, view.label, "".join(written), "done")
            self.source.replace(done)
            await block.finish(done)


TunaflowApp(Streaming(HISTORY), cursor_blink=False).run()
'''


def one_case(term: Terminal, streams: int, args: argparse.Namespace, env: dict[str, str], script: Path,
             stats: Path) -> tuple[list[float], list[float]]:
    stats.unlink(missing_ok=True)
    term.run([sys.executable, str(script), str(streams), str(args.rate), str(stats)], env)
    ready = term.wait_for(lambda lines: composer_row(lines) is not None, 60)
    assert ready is not None, "the app never drew its composer"
    time.sleep(1.5)  # the streams reach their pace (and the first frames settle)
    row = composer_row(term.screen()[1])
    assert row is not None
    def clear() -> None:
        term.send("C-u")
        term.wait_for(lambda lines: "Message…" in lines[row], 5, 0.01)

    type_keys(term, row, 10, args.gap, shown_in_composer, clear)  # warm up: first-use costs are not what is measured
    term.send("C-u")
    time.sleep(0.3)
    latencies = type_keys(term, row, args.keys, args.gap, shown_in_composer, clear)
    return latencies, read_rates(stats)


def read_rates(stats: Path) -> list[float]:
    """The chunk rates the app last reported (the app of the case before may still be writing its own)."""
    for _ in range(40):
        try:
            return json.loads(stats.read_text()) if stats.exists() else []
        except ValueError:  # emptied by the previous case's app as it went: its next report comes
            time.sleep(0.05)
    return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--gap", type=float, default=0.03, help="seconds between keys, by the clock")
    parser.add_argument("--streams", type=int, default=3)
    parser.add_argument("--size", default="160x48")
    parser.add_argument("--app-path", default=None, help="run the app from this src folder (PYTHONPATH)")
    args = parser.parse_args()
    width, height = (int(part) for part in args.size.lower().split("x"))
    import tunaflow_tui

    compileall.compile_dir(Path(tunaflow_tui.__file__).parent, quiet=1)
    results: dict[int, list[list[float]]] = {0: [], args.streams: []}
    rates: list[list[float]] = []
    with tempfile.TemporaryDirectory(prefix="tunaflow-bench-") as tmp:
        root = Path(tmp)
        env = env_for(str(root), {"PYTHONPATH": args.app_path} if args.app_path else None)
        script, stats = root / "streaming_app.py", root / "rates.json"
        script.write_text(APP)
        with Terminal(width, height) as term:
            for round_ in range(args.rounds):
                for streams in (0, args.streams):
                    latencies, achieved = one_case(term, streams, args, env, script, stats)
                    results[streams].append(latencies)
                    if streams:
                        rates.append(achieved)
                print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)

    print(f"{'case':<22}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}{'keys':>6}   p95 per round (ms)")
    for streams, rounds in results.items():
        pooled = [v * 1000 for r in rounds for v in r]
        per_round = ", ".join(f"{percentile(r, 95) * 1000:.0f}" for r in rounds)
        name = "no streams" if not streams else f"{streams} streams @ {args.rate:.0f}/s"
        print(f"{name:<22}{statistics.median(pooled):>8.1f}{percentile(pooled, 95):>8.1f}{max(pooled):>8.1f}"
              f"{len(pooled):>6}   {per_round}")
    loaded = [v for r in results[args.streams] for v in r]
    base = [v for r in results[0] for v in r]
    print(f"p95 with streams / without: {percentile(loaded, 95) / percentile(base, 95):.2f}x; "
          f"p95 with streams {percentile(loaded, 95) * 1000:.1f} ms (target ≤ 50 ms)")
    flat = [rate for round_rates in rates for rate in round_rates]
    if flat:
        print(f"achieved chunks/s per stream: median {statistics.median(flat):.0f} "
              f"(min {min(flat):.0f}; asked {args.rate:.0f})")
    print(f"keys every {args.gap * 1000:.0f} ms by the clock (open loop), {args.keys} per case and round, "
          f"{args.rounds} interleaved rounds, terminal {width}×{height} in tmux")
    return 0


if __name__ == "__main__":
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    raise SystemExit(main())
