"""Where a test run's time went: sums of the per-test durations of a JUnit XML report, by directory and file.

    python -m pytest ... --junitxml=run.xml
    python bench/suite_times.py run.xml [--other before.xml] [--top 25]

pytest's JUnit report gives each test's time (set-up, call and tear-down together). This prints the
sums by directory and the files that took longest; with ``--other`` (a report of another run, the
baseline) it adds that run's figures and the ratio of this run to it, file by file.
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def per_file(report: Path) -> dict[str, tuple[int, float]]:
    """Test file (``tests/...py``) → (tests, seconds summed) from a JUnit XML report."""
    found: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for case in ET.parse(report).iter("testcase"):
        name = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
        if not name.startswith("tests/"):  # classname may hold a test class after the module
            parts = case.get("classname", "").split(".")
            while parts and not parts[-1].startswith("test_"):
                parts.pop()
            name = "/".join(parts) + ".py"
        entry = found[name]
        entry[0] += 1
        entry[1] += float(case.get("time", "0") or 0)
    return {name: (int(count), seconds) for name, (count, seconds) in found.items()}


def per_directory(files: dict[str, tuple[int, float]]) -> dict[str, tuple[int, float]]:
    """The same sums by the test file's directory."""
    found: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for name, (count, seconds) in files.items():
        entry = found[str(Path(name).parent)]
        entry[0] += count
        entry[1] += seconds
    return {name: (int(count), seconds) for name, (count, seconds) in found.items()}


def _row(name: str, now: tuple[int, float], then: tuple[int, float] | None) -> str:
    text = f"{now[1]:9.1f} s {now[0]:5d} tests  {name}"
    if then is not None:
        ratio = f"{now[1] / then[1]:.2f}×" if then[1] else "-"
        text = f"{then[1]:9.1f} s → {text}  ({ratio})"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--other", type=Path, help="a baseline run's JUnit XML report")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    files = per_file(args.report)
    before = per_file(args.other) if args.other else None
    total = (sum(c for c, _ in files.values()), sum(s for _, s in files.values()))
    print("== by directory (seconds summed over tests)")
    dirs = per_directory(files)
    old_dirs = per_directory(before) if before else None
    for name, now in sorted(dirs.items(), key=lambda item: -item[1][1]):
        print(_row(name, now, old_dirs.get(name) if old_dirs else None))
    print(f"== the {args.top} slowest files")
    for name, now in sorted(files.items(), key=lambda item: -item[1][1])[:args.top]:
        print(_row(name, now, before.get(name) if before else None))
    then = (sum(c for c, _ in before.values()), sum(s for _, s in before.values())) if before else None
    print("== all")
    print(_row("total", total, then))


if __name__ == "__main__":
    main()
