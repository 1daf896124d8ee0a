"""Key-to-screen latency in the composer while three plans' Developers stream, in a real terminal: open loop.

Run: python bench/parallel_typing.py [--rounds 3] [--keys 200] [--plans 3] [--rate 50] [--gap 0.03]
Target: p95 ≤ 50 ms with three Developers streaming.

The app is tunaflow's whole app on the sample project with the real runtime (store, turns, plan cycle,
worktrees), run in tmux (``tmux_term.py``) by ``tests/support/steady_developers.py``: three plan
proposals are seeded and approved as the app opens, and each plan's stand-in Developer writes into its
plan's conversation at ``--rate`` pieces a second (a piece is about a token) for the whole case, as three
Developers working at once do; every other role is the demo engine. A typist presses a key every
``--gap`` seconds by the clock in the main chat's composer (``typing_probe.py``): a slow frame delays
every key typed meanwhile and each of them counts.

The baseline is the same app on the same project with no plan in flight, measured in the same run;
cases are interleaved (baseline, Developers, baseline, …) and the figures pool every round's keys, with
the per-round p95 as the spread. The pieces a second each Developer achieved are printed too: a runtime
that fell behind would otherwise look fast by quietly streaming less.
"""

from __future__ import annotations

import argparse
import compileall
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tmux_term import Terminal, env_for
from typing_probe import composer_row, percentile, shown_in_composer, type_keys

LAUNCHER = Path(__file__).resolve().parents[1] / "tests" / "support" / "steady_developers.py"


def one_case(term: Terminal, plans: int, args: argparse.Namespace, env: dict[str, str], folder: Path,
             stats: Path) -> tuple[list[float], list[float]]:
    """Open the app with ``plans`` Developers streaming, type, and return (latencies, achieved rates)."""
    stats.unlink(missing_ok=True)
    term.run([sys.executable, str(LAUNCHER), str(folder), "--plans", str(plans), "--rate", str(args.rate),
              "--seconds", "600", "--stats", str(stats)], env)
    ready = term.wait_for(lambda lines: composer_row(lines) is not None, 90)
    assert ready is not None, "the app never drew its composer"
    if plans:  # every Developer writing before the clock starts
        deadline = time.perf_counter() + 90
        while len(read_rates(stats)) < plans:
            assert time.perf_counter() < deadline, f"only {len(read_rates(stats))} Developers started"
            time.sleep(0.2)
    time.sleep(1.5)  # the first frames settle
    row = composer_row(term.screen()[1])
    assert row is not None
    # the opening's toasts ("a decision is waiting") cover the composer's line: gone first (a toast that timed
    # out can stay drawn until the screen next changes, so a key is typed and wiped to redraw it)
    deadline = time.perf_counter() + 60
    while "▌" in term.screen()[1][row]:
        assert time.perf_counter() < deadline, "a toast stayed over the composer"
        term.send(" ")
        term.send("C-u")
        time.sleep(1.0)

    def clear() -> None:
        term.send("C-u")
        term.wait_for(lambda lines: "Message…" in lines[row], 5, 0.01)

    type_keys(term, row, 10, args.gap, shown_in_composer, clear)  # warm up: first-use costs are not measured
    term.send("C-u")
    time.sleep(0.3)
    latencies = type_keys(term, row, args.keys, args.gap, shown_in_composer, clear)
    return latencies, read_rates(stats)


def read_rates(stats: Path) -> list[float]:
    """The pieces a second each Developer achieved, as the app last wrote them."""
    try:
        rates: list[float] = json.loads(stats.read_text())
        return rates
    except (OSError, ValueError):
        return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("--plans", type=int, default=3)
    parser.add_argument("--rate", type=float, default=50.0, help="pieces a second each Developer writes")
    parser.add_argument("--gap", type=float, default=0.03, help="seconds between keys, by the clock")
    parser.add_argument("--size", default="120x40")
    args = parser.parse_args()
    width, height = (int(part) for part in args.size.lower().split("x"))
    import tunaflow_tui

    compileall.compile_dir(Path(tunaflow_tui.__file__).parent, quiet=1)
    results: dict[int, list[list[float]]] = {0: [], args.plans: []}
    rates: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tunaflow-bench-") as tmp:
        root = Path(tmp)
        src = str(Path(tunaflow_tui.__file__).resolve().parents[1])
        env = env_for(str(root), {"PYTHONPATH": src})
        with Terminal(width, height) as term:
            for round_ in range(args.rounds):
                for plans in (0, args.plans):
                    folder = root / f"case-{round_}-{plans}"
                    latencies, achieved = one_case(term, plans, args, env, folder, root / "rates.json")
                    results[plans].append(latencies)
                    rates += achieved
                print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
            term.send("C-q")

    print(f"{'case':<28}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}{'keys':>6}   p95 per round (ms)")
    for plans, rounds in results.items():
        pooled = [v * 1000 for r in rounds for v in r]
        per_round = ", ".join(f"{percentile(r, 95) * 1000:.0f}" for r in rounds)
        name = "no plan in flight" if not plans else f"{plans} Developers @ {args.rate:.0f}/s"
        print(f"{name:<28}{statistics.median(pooled):>8.1f}{percentile(pooled, 95):>8.1f}{max(pooled):>8.1f}"
              f"{len(pooled):>6}   {per_round}")
    loaded = [v for r in results[args.plans] for v in r]
    base = [v for r in results[0] for v in r]
    p95 = percentile(loaded, 95) * 1000
    print(f"p95 with Developers / without: {percentile(loaded, 95) / percentile(base, 95):.2f}x; "
          f"p95 with Developers {p95:.1f} ms (target ≤ 50 ms: {'met' if p95 <= 50 else 'not met'})")
    if rates:
        print(f"achieved pieces/s per Developer: median {statistics.median(rates):.0f} "
              f"(min {min(rates):.0f}; asked {args.rate:.0f})")
    print(f"keys every {args.gap * 1000:.0f} ms by the clock (open loop), {args.keys} per case and round, "
          f"{args.rounds} interleaved rounds, terminal {width}×{height} in tmux")
    return 0


if __name__ == "__main__":
    sys.exit(main())
