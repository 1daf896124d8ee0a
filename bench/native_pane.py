"""A native CLI's terminal pane in the real app, in a real terminal (tmux): key-to-screen latency, open loop.

Run: .venv/bin/python bench/native_pane.py [--rounds 2] [--keys 150] [--gap 0.03]
Targets: a key typed into the pane reaches its screen with p95 ≤ 30 ms; typing in tunaflow's own
composer stays ≤ 50 ms p95 while a program in the pane prints 5 MB of coloured output as fast as it can.

The app is tunaflow's ``TunaflowApp`` with the pane pinned 50:50 (``TerminalPane`` over a
``PtySession``), in tmux (``tmux_term.py``). Cases, interleaved round by round:

- ``pane keys``: the pane has the focus and runs ``cat``; a key goes tmux → app → PTY, the kernel
  echoes it, the app parses the echo and draws it: its latency runs from the moment tmux took the key
  to the first look at the screen (after each write of the app) that shows it in the pane;
- ``composer, pane idle``: the baseline — the composer has the focus, the pane runs ``cat``;
- ``composer, pane flooding``: the composer has the focus while the pane's program prints a 5 MB
  file of coloured lines (~90 B each) over and over, as fast as the PTY takes it.

Keys are pressed every ``--gap`` seconds by the clock (as in ``ui_streams.py``); every 40 keys the line
is cleared, off the clock. The app reports how many MB a second the pane parsed, so a UI that kept the
composer fast by starving the pane would show it. The app's memory (RSS) at the end of each flood case
is printed too: the scrollback is capped (``[ui] terminal_scrollback``, 10,000 lines here).

``--against SRC`` adds a fourth case, interleaved with the others: the flooding one with tunaflow imported from
``SRC`` (another tree's ``src``, e.g. ``git archive HEAD~1 src | tar -x -C /tmp/before``), so a change is
compared with what it changes on the same machine in the same minutes.
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
from collections.abc import Sequence
from pathlib import Path

from tmux_term import Terminal, env_for
from typing_probe import composer_row, percentile, shown_in_composer, type_keys

APP = r'''
import asyncio, json, os, sys, time
from pathlib import Path
from tunaflow_tui.app import DemoChatController, TunaflowApp
from tunaflow_tui.agents.terminal.pty_session import PtySession, PtySpec
from tunaflow_tui.widgets.terminal_pane import TerminalPane

MODE, STATS, FLOOD = sys.argv[1], sys.argv[2], sys.argv[3]


class Bench(DemoChatController):
    def attach(self, app):
        super().attach(app)
        app.call_later(self.start)

    async def start(self):
        argv = ["sh", "-c", 'while :; do cat "$0"; done', FLOOD] if MODE == "flood" else ["cat"]
        self.session = PtySession(PtySpec(argv, Path.cwd(), lines=40, columns=70, scrollback=10_000))
        self.session.start()
        pane = TerminalPane(self.session)
        await self.app.workspace.pane.show_live("bench", pane)
        self.app.workspace.mode = "pinned"
        if MODE == "pane":
            pane.focus()
        else:
            self.app.composer.focus_input()
        self.started, self.fed = time.perf_counter(), self.session.emulator.bytes_fed
        self.app.set_interval(0.5, self.report)

    def report(self):
        rate = (self.session.emulator.bytes_fed - self.fed) / 1e6 / (time.perf_counter() - self.started)
        self.app.run_worker(asyncio.to_thread(self.write, rate), group="bench-report", exit_on_error=False)

    @staticmethod
    def write(rate):
        with open(STATS + ".part", "w") as out:
            json.dump(rate, out)
        os.replace(STATS + ".part", STATS)


TunaflowApp(Bench(), cursor_blink=False).run()
'''


def shown_in_pane(lines: Sequence[str], _row: int, run: str) -> int:
    """How much of the run the pane shows (the kernel's echo of what was typed, on the pane's side)."""
    best = 0
    for line in lines:
        half = line[len(line) // 3:]
        while best < len(run) and run[: best + 1] in half:
            best += 1
    return best


def one_case(term: Terminal, mode: str, args: argparse.Namespace, env: dict[str, str], files: dict[str, Path],
             ) -> tuple[list[float], float | None, float]:
    stats = files["stats"]
    stats.unlink(missing_ok=True)
    if mode == "against":
        mode, env = "flood", {**env, "PYTHONPATH": args.against}
    term.run([sys.executable, str(files["script"]), mode, str(stats), str(files["flood"])], env)
    ready = term.wait_for(lambda lines: composer_row(lines) is not None and stats.exists(), 60)
    assert ready is not None, "the app never drew its composer and pane"
    time.sleep(1.0)
    row = composer_row(term.screen()[1])
    assert row is not None
    shown = shown_in_pane if mode == "pane" else shown_in_composer

    def clear() -> None:
        term.send("C-u" if mode != "pane" else "Enter")
        time.sleep(0.3)

    type_keys(term, row, 10, args.gap, shown, clear)  # warm up
    clear()
    latencies = type_keys(term, row, args.keys, args.gap, shown, clear)
    rate = json.loads(stats.read_text()) if mode == "flood" else None
    return latencies, rate, term.rss_mb()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keys", type=int, default=150)
    parser.add_argument("--gap", type=float, default=0.03, help="seconds between keys, by the clock")
    parser.add_argument("--size", default="160x48")
    parser.add_argument("--against", metavar="SRC", help="also the flooding case with tunaflow imported from SRC")
    args = parser.parse_args()
    width, height = (int(part) for part in args.size.lower().split("x"))
    load_before = os.getloadavg()[0]
    import tunaflow_tui

    compileall.compile_dir(Path(tunaflow_tui.__file__).parent, quiet=1)
    cases = {"pane": "pane keys (cat)", "idle": "composer, pane idle", "flood": "composer, pane flooding"}
    if args.against:
        args.against = str(Path(args.against).resolve())
        compileall.compile_dir(Path(args.against) / "tunaflow_tui", quiet=1)
        cases["against"] = "  the same, against SRC"
    results: dict[str, list[list[float]]] = {mode: [] for mode in cases}
    rates: dict[str, list[float]] = {"flood": [], "against": []}
    rss: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tunaflow-bench-") as tmp:
        root = Path(tmp)
        flood = root / "flood.txt"
        line = "\x1b[3{c}mflood line {n:06d} \x1b[1m" + "x" * 60 + "\x1b[0m\r\n"
        with flood.open("w") as out:
            size, n = 0, 0
            while size < 5 * 1024 * 1024:
                text = line.format(c=n % 8, n=n)
                out.write(text)
                size, n = size + len(text), n + 1
        files = {"script": root / "pane_app.py", "stats": root / "rate.json", "flood": flood}
        files["script"].write_text(APP)
        env = env_for(str(root), {"PYTHONPATH": os.environ.get("PYTHONPATH", "")})
        with Terminal(width, height) as term:
            for round_ in range(args.rounds):
                for mode in cases:
                    latencies, rate, memory = one_case(term, mode, args, env, files)
                    results[mode].append(latencies)
                    if rate is not None:
                        rates[mode].append(rate)
                        if mode == "flood":
                            rss.append(memory)
                print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)

    print(f"{'case':<26}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}{'keys':>6}   p95 per round (ms)")
    for mode, rounds in results.items():
        pooled = [v * 1000 for r in rounds for v in r]
        per_round = ", ".join(f"{percentile(r, 95) * 1000:.0f}" for r in rounds)
        print(f"{cases[mode]:<26}{statistics.median(pooled):>8.1f}{percentile(pooled, 95):>8.1f}"
              f"{max(pooled):>8.1f}{len(pooled):>6}   {per_round}")
    base = [v for r in results["idle"] for v in r]
    loaded = [v for r in results["flood"] for v in r]
    pane = [v for r in results["pane"] for v in r]
    print(f"pane keys p95 {percentile(pane, 95) * 1000:.1f} ms (target ≤ 30 ms)")
    print(f"composer p95 flooding / idle: {percentile(loaded, 95) / percentile(base, 95):.2f}x; "
          f"p95 while flooding {percentile(loaded, 95) * 1000:.1f} ms (target ≤ 50 ms)")
    if args.against:
        against = [v for r in results["against"] for v in r]
        print(f"against {args.against}: composer p95 flooding / idle "
              f"{percentile(against, 95) / percentile(base, 95):.2f}x; this tree / against, p95 while flooding "
              f"{percentile(loaded, 95) / percentile(against, 95):.2f}x; "
              f"pane parsed {', '.join(f'{r:.2f}' for r in rates['against'])} MB/s")
    print(f"pane parsed while flooding: {', '.join(f'{r:.2f}' for r in rates['flood'])} MB/s; "
          f"app RSS after the flood: {', '.join(f'{m:.0f}' for m in rss)} MB")
    print(f"keys every {args.gap * 1000:.0f} ms by the clock (open loop), {args.keys} per case and round, "
          f"{args.rounds} interleaved rounds, terminal {width}×{height} in tmux; "
          f"load {load_before:.1f} → {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    raise SystemExit(main())
