"""What running nothing planted costs tunaflow's own git: the pinned runner against plain git calls.

tunaflow's git commands carry a pinned configuration, and those that may run a filter, driver or
signing program first read the repository's configuration (one ``git config`` call). This times
the operations tunaflow runs around every agent turn and commit — fingerprint (ls-files + status),
``is_clean``, ``diff_stat`` against the base, a commit of one changed file — in a repository of
``--files`` files, once through the pinned runner and once with the pins off (the same runner
minus the configuration read and the ``-c`` options: the baseline, measured in the same run).
Cases are interleaved (each once, then the next round); figures are medians with the spread.

Run: ``python bench/git_pinned.py [--files 2000] [--rounds 7]``. No target: the figure says what
the safety costs; the ratio should stay well under 2×.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tunaflow_tui.core import gitops
from tunaflow_tui.core.gitops import runner


@contextmanager
def unpinned() -> Iterator[None]:
    """The runner without the configuration read or the ``-c`` options (the baseline)."""
    needs, pinned = runner._needs_program_pins, runner.PINNED_CONFIG
    runner._needs_program_pins = lambda sub, rest: False
    runner.PINNED_CONFIG = ()
    try:
        yield
    finally:
        runner._needs_program_pins, runner.PINNED_CONFIG = needs, pinned


def make_repo(root: Path, files: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    for i in range(files):
        sub = repo / f"pkg{i % 20}"
        sub.mkdir(exist_ok=True)
        (sub / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"], cwd=repo, check=True)
    subprocess.run(["git", "switch", "-q", "-c", "work"], cwd=repo, check=True)
    return repo


def one_cycle(repo: Path, n: int) -> None:
    (repo / "pkg0" / "mod0.py").write_text(f"def f0():\n    return {n}\n", encoding="utf-8")
    gitops.fingerprint(repo)
    gitops.is_clean(repo)
    gitops.diff_stat(repo, "main")
    gitops.commit_all(repo, f"change {n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp), args.files)
        one_cycle(repo, 0)  # warm the page cache and the index
        times: dict[str, list[float]] = {"pinned": [], "plain": []}
        counter = 1

        def pinned() -> None:
            one_cycle(repo, counter)

        def plain() -> None:
            with unpinned():
                one_cycle(repo, counter)

        cases: dict[str, Callable[[], None]] = {"pinned": pinned, "plain": plain}
        for _ in range(args.rounds):
            for name, case in cases.items():
                start = time.perf_counter()
                case()
                times[name].append(time.perf_counter() - start)
                counter += 1
    print(f"one cycle (fingerprint, is_clean, diff_stat, commit) in a repository of {args.files} files, "
          f"{args.rounds} rounds")
    for name, values in times.items():
        print(f"  {name:7s} median {statistics.median(values) * 1000:7.1f} ms "
              f"(min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f})")
    ratio = statistics.median(times["pinned"]) / statistics.median(times["plain"])
    print(f"  pinned / plain: {ratio:.2f}x")


if __name__ == "__main__":
    main()
