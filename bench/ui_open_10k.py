"""Opening a long conversation in a real terminal, and reaching its first message: time and memory.

Run: .venv/bin/python bench/ui_open_10k.py [--repeats 3] [--sizes 10000,100000] [--timeout 120]

Everything runs in tmux (see ``tmux_term.py``), launched as users launch it, ``tunaflow PATH``, on
git projects whose main conversation holds 10,000 and 100,000 realistic Markdown messages (questions,
answers with headings, lists, code blocks and tables; written through the store before timing
starts), next to an empty project and a minimal Textual app (Header, Static, Footer). The cases are
interleaved — every case once, then the next round — and each figure is the median of the rounds
with its spread (min–max).

* **first frame**: from starting the process to the first screen showing the app (the minimal
  app's text; tunaflow's composer), and the CPU time the process had used by then (user + system;
  on a shared machine much steadier than the wall time).
* **newest shown**: until the newest message is on screen.
* **home → #1**: the chat gets the focus (escape) and home is held down (pressed every 33 ms, a
  terminal's key repeat) until message #1 is on screen, at most ``--timeout`` seconds.
* **end → newest**: end held down until the newest message is back on screen.
* **RSS**: after the newest showed, after reaching #1, and the most seen while scrolling.

``--embeddings off`` leaves the embedding model out (a project opened for the first time loads it to
index its messages in the background), so the RSS figures show what the chat itself holds.

``--sizes ''`` measures the first frame alone (the empty project next to the minimal app), and
``--before OTHER/src`` adds the empty project opened by another checkout, interleaved with the rest.

Targets: first frame ≤ 1.5× the minimal app; #1 reached ≤ 3 s from the newest at 10k and 100k;
RSS ≤ 150 MB after scrolling the whole way.

To measure another checkout with the same projects, run with ``--app-path OTHER/src``: the app runs
from there, the projects are still written by this checkout's store (the schema is the same).
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tmux_term import Terminal, env_for

FIRST = "Let us start the textstats project"
NEWEST = "That wraps up the release notes"
KEY_REPEAT_S = 0.033
MINIMAL_APP = """from textual.app import App
from textual.widgets import Footer, Header, Static


class Minimal(App[None]):
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self):
        yield Header()
        yield Static("hello from a minimal app")
        yield Footer()


Minimal().run()
"""

WORDS = ("the counter", "word frequency", "the report", "`textstats`", "the CLI", "a test", "the cache",
         "Unicode input", "empty files", "the tokenizer", "`--words`", "stdin", "the README", "a flag")


def question(rng: random.Random, n: int) -> str:
    text = f"Could you look at {rng.choice(WORDS)} next? It should handle {rng.choice(WORDS)} too."
    if rng.random() < 0.3:
        text += f"\n\nThis fails for me:\n\n```\ntextstats --top {n % 20} notes.txt\n```"
    return text


def answer(rng: random.Random, n: int) -> str:
    items = "\n".join(f"- **{rng.choice(WORDS)}**: handles {rng.choice(WORDS)} (see `f_{n}_{i}()`)"
                      for i in range(rng.randint(2, 5)))
    code = "\n".join(f"    total += count_{i}(line)" for i in range(rng.randint(2, 8)))
    parts = [f"## Step {n}: {rng.choice(WORDS)}",
             f"I read `textstats/counting.py` and {rng.choice(WORDS)} before changing anything.", items,
             f"```python\ndef step_{n}(lines):\n    total = 0\n    for line in lines:\n{code}\n    return total\n```"]
    if rng.random() < 0.25:
        parts.append("| file | words |\n|---|---|\n| a.txt | 12 |\n| b.txt | 40 |")
    parts.append(f"All {rng.randint(3, 40)} tests pass.")
    return "\n\n".join(parts)


def fill(project: Path, count: int) -> float:
    """A git project whose main conversation holds ``count`` messages; seconds it took."""
    from tunaflow_tui.core.storage import Store

    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    # a first commit, as a real project has: an empty repository opens with a notice about it
    subprocess.run(["git", "-C", str(project), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                    "commit", "-q", "--allow-empty", "-m", "Start"], check=True)
    rng = random.Random(count)
    started = time.perf_counter()

    def messages():  # type: ignore[no-untyped-def]
        for n in range(1, count + 1):
            if n % 2:
                text = question(rng, n)
                if n == 1:
                    text = f"{FIRST}. {text}"
                yield {"role": "user", "content": text}
            else:
                text = answer(rng, n)
                if n == count:
                    text = f"{text}\n\n{NEWEST}."
                yield {"role": "assistant", "content": text, "persona": "architect", "engine": "demo"}

    with Store.open(project) as store:
        if count:
            store.add_messages("main", messages())
    return time.perf_counter() - started


def shows(text: str):  # type: ignore[no-untyped-def]
    return lambda lines: any(text in line for line in lines)


def hold(term: Terminal, key: str, until: str, timeout: float) -> tuple[float | None, float]:
    """Press ``key`` every 33 ms until ``until`` is on screen: (seconds, or None; most RSS seen)."""
    started = time.perf_counter()
    next_key = started
    next_rss = started
    peak = 0.0
    while time.perf_counter() - started < timeout:
        now = time.perf_counter()
        if now >= next_key:
            term.send(key)
            next_key += KEY_REPEAT_S
        if now >= next_rss:
            peak = max(peak, term.rss_mb())
            next_rss = now + 0.5
        stamp = term.wait_for(shows(until), timeout=max(0.001, next_key - time.perf_counter()), poll=0.01)
        if stamp is not None:
            return stamp - started, max(peak, term.rss_mb())
    return None, max(peak, term.rss_mb())


def run_case(term: Terminal, case: str, project: Path | None, env: dict[str, str], timeout: float,
             script: Path) -> dict[str, float | None]:
    if case == "minimal":
        started = term.run([sys.executable, str(script)], env)
        frame = term.wait_for(shows("hello from a minimal app"), 60)
        assert frame is not None, "the minimal app never drew"
        return {"first_frame": frame - started, "first_frame_cpu": term.cpu_seconds(), "rss_open": term.rss_mb()}
    tunaflow = shutil.which("tunaflow", path=str(Path(sys.executable).parent)) or "tunaflow"
    started = term.run([tunaflow, str(project)], env)
    frame = term.wait_for(shows("Message…"), 60)
    assert frame is not None, f"{case}: tunaflow never drew"
    result: dict[str, float | None] = {"first_frame": frame - started, "first_frame_cpu": term.cpu_seconds()}
    if case.startswith("empty"):
        opened = term.wait_for(shows("→ Architect"), 60)
        result["newest"] = None if opened is None else opened - started
        result["rss_open"] = term.rss_mb()
        return result
    newest = term.wait_for(shows(NEWEST), 120)
    assert newest is not None, f"{case}: the newest message never showed"
    result["newest"] = newest - started
    # the project is open (its opening gives the composer the focus once more): now escape goes
    # from the composer to the chat, as a user does before paging
    term.wait_for(lambda lines: not any("Opening project" in line for line in lines), 60)
    result["rss_open"] = term.rss_mb()
    term.send("Escape")
    in_chat = term.wait_for(lambda lines: "⏎ Send" not in lines[-1], 10)
    assert in_chat is not None, f"{case}: escape did not leave the composer"
    result["home"], peak_up = hold(term, "Home", FIRST, timeout)
    result["rss_first"] = term.rss_mb()
    result["end"], peak_down = hold(term, "End", NEWEST, timeout)
    result["rss_end"] = term.rss_mb()
    result["rss_peak"] = max(peak_up, peak_down, result["rss_first"] or 0, result["rss_end"] or 0)
    return result


def spread(values: list[float | None], scale: float = 1.0, digits: int = 0) -> str:
    if any(v is None for v in values):
        done = [v for v in values if v is not None]
        return f"not in time ({len(values) - len(done)}/{len(values)})"
    numbers = [float(v) * scale for v in values if v is not None]
    return (f"{statistics.median(numbers):.{digits}f} "
            f"({min(numbers):.{digits}f}–{max(numbers):.{digits}f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", default="10000,100000", help="conversation sizes, comma-separated")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to hold home / end at most")
    parser.add_argument("--app-path", default=None, help="run the app from this src folder (PYTHONPATH)")
    parser.add_argument("--before", default=None,
                        help="also open the empty project with the app from this src folder (its first frame "
                             "next to this checkout's, interleaved)")
    parser.add_argument("--embeddings", choices=("on", "off"), default="on",
                        help="off: [memory] embeddings = false, so RSS shows the chat without the embedding "
                             "model that the background indexer loads for a project's first backfill")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    bench_started = time.perf_counter()
    import tunaflow_tui

    compileall.compile_dir(Path(tunaflow_tui.__file__).parent, quiet=1)
    for other in (args.app_path, args.before):
        if other:
            compileall.compile_dir(Path(other) / "tunaflow_tui", quiet=1)
    with tempfile.TemporaryDirectory(prefix="tunaflow-bench-") as tmp:
        root = Path(tmp)
        env = env_for(str(root), {"PYTHONPATH": args.app_path} if args.app_path else None)
        if args.embeddings == "off":
            config = root / "config" / "tunaflow" / "config.toml"
            config.parent.mkdir(parents=True)
            config.write_text("[memory]\nembeddings = false\n", encoding="utf-8")
        script = root / "minimal_app.py"
        script.write_text(MINIMAL_APP)
        projects: dict[str, Path | None] = {"minimal": None, "empty": root / "empty"}
        envs = {case: env for case in projects}
        if args.before:
            projects["empty-before"] = root / "empty"
            envs["empty-before"] = env_for(str(root), {"PYTHONPATH": args.before})
        fill(root / "empty", 0)
        for size in sizes:
            seconds = fill(root / f"c{size}", size)
            projects[f"{size // 1000}k"] = root / f"c{size}"
            envs[f"{size // 1000}k"] = env
            print(f"wrote {size:,} messages in {seconds:.1f} s")
        results: dict[str, list[dict[str, float | None]]] = {case: [] for case in projects}
        with Terminal(120, 40) as term:
            for round_ in range(args.repeats):
                for case, project in projects.items():
                    results[case].append(run_case(term, case, project, envs[case], args.timeout, script))
                print(f"round {round_ + 1}/{args.repeats} done", file=sys.stderr)

    def column(case: str, key: str) -> list[float | None]:
        return [r.get(key) for r in results[case]]

    print(f"\n{'case':<14}{'first frame ms':>20}{'its CPU ms':>20}{'newest shown ms':>22}{'home → #1 s':>22}"
          f"{'end → newest s':>22}")
    for case in projects:
        row = f"{case:<14}{spread(column(case, 'first_frame'), 1000):>20}{spread(column(case, 'first_frame_cpu'), 1000):>20}"
        if case != "minimal":
            row += f"{spread(column(case, 'newest'), 1000):>22}"
        if not case.startswith(("minimal", "empty")):
            row += f"{spread(column(case, 'home'), 1, 2):>22}{spread(column(case, 'end'), 1, 2):>22}"
        print(row)
    print(f"\n{'case':<14}{'RSS open MB':>20}{'RSS at #1 MB':>20}{'RSS back at end':>20}{'RSS most seen':>20}")
    for case in projects:
        row = f"{case:<14}{spread(column(case, 'rss_open'), 1, 1):>20}"
        if not case.startswith(("minimal", "empty")):
            row += (f"{spread(column(case, 'rss_first'), 1, 1):>20}{spread(column(case, 'rss_end'), 1, 1):>20}"
                    f"{spread(column(case, 'rss_peak'), 1, 1):>20}")
        print(row)
    minimal = statistics.median(float(v) for v in column("minimal", "first_frame") if v is not None)
    minimal_cpu = statistics.median(float(v) for v in column("minimal", "first_frame_cpu") if v is not None)
    for case in projects:
        if case == "minimal":
            continue
        frame = statistics.median(float(v) for v in column(case, "first_frame") if v is not None)
        cpu = statistics.median(float(v) for v in column(case, "first_frame_cpu") if v is not None)
        print(f"first frame {case} / minimal Textual app: {frame / minimal:.2f}x (target ≤ 1.50x); "
              f"its CPU time: {cpu / minimal_cpu:.2f}x")
    print(f"load average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print(f"medians of {args.repeats} interleaved rounds (min–max); terminal 120×40 in tmux; "
          f"home/end held at most {args.timeout:.0f} s; embeddings {args.embeddings}; targets: #1 ≤ 3 s, RSS ≤ 150 MB; "
          f"bench took {time.perf_counter() - bench_started:.0f} s")
    return 0


if __name__ == "__main__":
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    raise SystemExit(main())
