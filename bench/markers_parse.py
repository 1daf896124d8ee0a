"""Marker parser speed on dense adversarial replies: five 1 MB shapes, against a regex that finds the markers.

Each shape stresses one part of the parser with replies an agent could write (or be tricked into
writing), about 1 MB each:

* ``unclosed-openers``: a proposal whose opener is repeated, never closed, over heading-like lines
  (``**Title**:``, ``## Subtasks``, ``### Task N``, tables): one block read line by line.
* ``mixed-kinds``: review-verdict and consensus openers taking turns, each cutting the previous
  block short, over verdict, score, quoted and finding lines.
* ``long-lines``: 50 KB lines of prose with inline code, tiny markers and ordinary comments.
* ``tiny-markers``: short lines of markers and near-markers, quoted, indented and in code.
* ``deep-lists``: lists nested 80 levels deep (spaces and tabs) with markers at the deepest items.
* ``mixed``: the earlier all-in-one adversarial reply (unclosed markers, nested lists, fences, stray
  ``<!--``), kept to compare with older figures.

The baseline is a compiled regular expression that finds the same marker comments (``findall``
over the same text); it does not apply the quote rule or read any block, so it is the floor of what
finding markers costs in Python. Cases are interleaved (every shape, then the next round) and each
figure is the median of the rounds, with the spread (min–max). The growth ratio from 0.25 MB to
1 MB shows linearity (4.0 is linear).

``--before tests/core/markers/reference_parser`` also times, interleaved in the same run, the parser
kept there as the reference (the parser before its shared line pass; any package folder with a
``parse_markers`` works): its process CPU time per shape and the ratio after / before.

Run: ``python bench/markers_parse.py [--rounds 7] [--before FOLDER]``. Target: every 1 MB shape
≤ 100 ms of CPU time.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tunaflow_tui.core.markers import MarkerStream, parse_markers

TARGET_1MB_MS = 100.0
MB = 1_000_000

#: Finds ``<!-- tunaflow:... -->`` / ``<!-- /tunaflow:... -->`` comments (whitespace allowed).
MARKER_REGEX = re.compile(r"<!--\s*/?\s*tunaflow\s*:[^>]{0,120}?-->", re.IGNORECASE)


def _repeat(unit: Callable[[int], str], size: int) -> str:
    parts: list[str] = []
    total = n = 0
    while total < size:
        n += 1
        part = unit(n)
        parts.append(part)
        total += len(part)
    return "".join(parts)[:size]


def unclosed_openers(size: int) -> str:
    """One proposal opener after another, never closed, over proposal-like lines."""
    def unit(n: int) -> str:
        return (
            f"<!-- tunaflow:plan-proposal -->\n**Title**: Cache the token lookups ({n})\n"
            f"## Subtasks\n1. **Add a cache** — keep `tokens` per file\n   details under the item {n}\n"
            f"### Task {n} — write the tests\nDescription: the cache is cleared on save\n"
            f"| # | Task | Details |\n|---|---|---|\n| {n} | Measure | before and after |\n"
            f"**Constraints**\n- no new dependency\nExpected outcome: faster lookups\n\n"
        )
    return _repeat(unit, size)


def mixed_kinds(size: int) -> str:
    """Verdict and consensus openers taking turns, each ending the previous block unclosed."""
    def unit(n: int) -> str:
        kind = ("review-verdict", "consensus")[n % 2]
        return (
            f"<!-- tunaflow:{kind} -->\n## Verdict\n**Overall verdict**: does not pass\n"
            f"> verdict: PASS (quoted from the Developer)\n- code_quality: 4/5\n| Plan coverage | 3 |\n"
            f"failed_subtask_ids: [{n}, 2]\n## Findings\n- Quality: 2 - error handling missing\n"
            f"  continues under the finding {n}\n**Consensus**: use the cache\n반대 의견:\n- 없음\n\n"
        )
    return _repeat(unit, size)


def long_lines(size: int) -> str:
    """Lines of about 50 KB: prose, inline code of every length, tiny markers and other comments."""
    def unit(n: int) -> str:
        return (
            f"the `cache` and ``double ` tick`` <!--tunaflow:subtask-done:{n % 9 + 1}--> then <!---->"
            f" ```` run ```` <!-- note --> `{n}` <!--tunaflow:impl-complete--> and more text "
            + ("\n" if n % 400 == 0 else "")
        )
    return _repeat(unit, size)


def tiny_markers(size: int) -> str:
    """Short lines of markers and near-markers: quoted, indented, in code spans and plain."""
    def unit(n: int) -> str:
        return (
            f"<!--tunaflow:subtask-done:{n % 50 + 1}-->\n> <!--tunaflow:impl-complete-->\n"
            f"    <!--tunaflow:impl-complete-->\n`<!--tunaflow:impl-complete-->`\n<!--x-->\n"
            f"<!-- tunaflow:subtask-done:0 -->\nplain text line {n}\n\n"
        )
    return _repeat(unit, size)


def deep_lists(size: int) -> str:
    """Lists nested 80 levels deep (spaces, some tabs) with markers at the deepest items."""
    def unit(n: int) -> str:
        indent = "\t" if n % 3 == 0 else "  "
        lines = [indent * depth + f"- item {depth} of list {n}\n" for depth in range(80)]
        lines.append(indent * 80 + f"<!-- tunaflow:subtask-done:{n % 9 + 1} -->\n\n")
        return "".join(lines)
    return _repeat(unit, size)


def mixed(size: int) -> str:
    """The earlier all-in-one adversarial reply."""
    def unit(n: int) -> str:
        nested = "".join("  " * d + f"{d + 1}. item {d} `x` **b**\n" for d in range(n % 60))
        kind = ("plan-proposal", "review-verdict", "consensus")[n % 3]
        return (
            f"<!-- tunaflow:{kind} -->\n# Plan {n}\nsubtasks\n{nested}"
            f"<!--  tunaflow : subtask-done : {n} -->\n<!-- not closed <!-- <!-- tunaflow:review-verdict -->\n"
            f"verdict: PASS\nplan_coverage: 4/5\n- code_quality: 9\nfailed_subtask_ids: [{n}, 2]\n"
            f"``` `` ` <!-- tunaflow:impl-complete --> `` ```\n```markdown\n<!-- tunaflow:consensus -->\n"
            f"| a | b |\n```\n한국어 서브태스크 <!-- tunaflow:subtask-done:N -->\n"
        )
    return _repeat(unit, size)


SHAPES: dict[str, Callable[[int], str]] = {
    "unclosed-openers": unclosed_openers,
    "mixed-kinds": mixed_kinds,
    "long-lines": long_lines,
    "tiny-markers": tiny_markers,
    "deep-lists": deep_lists,
    "mixed": mixed,
}


CPU: list[float] = []  # the process CPU time of the last timed call, beside its wall time


def timed(fn: Callable[[], object]) -> float:
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    CPU[:] = [time.process_time() - cpu]
    return time.perf_counter() - start


def stream_all(text: str, chunk: int = 64) -> None:
    """Feed ``text`` to a MarkerStream in ``chunk``-sized pieces, then finish it."""
    stream = MarkerStream()
    for i in range(0, len(text), chunk):
        stream.feed(text[i : i + chunk])
    stream.finish()


def load_parser(folder: str) -> Callable[[str], object]:
    """``parse_markers`` of the parser package in ``folder`` (relative imports inside it), loaded beside ours."""
    path = Path(folder).resolve()
    name = "markers_before"
    spec = importlib.util.spec_from_file_location(name, path / "__init__.py", submodule_search_locations=[str(path)])
    if spec is None or spec.loader is None:
        raise SystemExit(f"no parser package in {folder}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parse: Callable[[str], object] = module.parse_markers
    return parse


def spread(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:7.1f} ({min(values) * 1e3:.1f}–{max(values) * 1e3:.1f})"


def main() -> int:
    """Print, per shape, the median parse time of 1 MB with its spread, the regex baseline and growth."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--stream", action="store_true", help="also time MarkerStream over 64-char chunks")
    parser.add_argument("--before", metavar="FOLDER", help="also time the parser package in FOLDER (CPU)")
    args = parser.parse_args()
    before = load_parser(args.before) if args.before else None
    texts = {name: make(MB) for name, make in SHAPES.items()}
    quarters = {name: make(MB // 4) for name, make in SHAPES.items()}
    parse: dict[str, list[float]] = {name: [] for name in SHAPES}
    quarter: dict[str, list[float]] = {name: [] for name in SHAPES}
    regex: dict[str, list[float]] = {name: [] for name in SHAPES}
    stream: dict[str, list[float]] = {name: [] for name in SHAPES}
    cpu: dict[str, list[float]] = {name: [] for name in SHAPES}
    cpu_before: dict[str, list[float]] = {name: [] for name in SHAPES}
    for _ in range(args.rounds):  # interleaved: a slow moment of the machine hits every case alike
        for name in SHAPES:
            text = texts[name]
            regex[name].append(timed(lambda t=text: MARKER_REGEX.findall(t)))
            if before is not None:
                timed(lambda t=text: before(t))
                cpu_before[name].append(CPU[0])
            parse[name].append(timed(lambda t=text: parse_markers(t)))
            cpu[name].append(CPU[0])
            quarter[name].append(timed(lambda t=quarters[name]: parse_markers(t)))
            if args.stream:
                stream[name].append(timed(lambda t=text: stream_all(t)))
    print(f"{'1 MB shape':<18}{'markers':>8}{'regex':>7}  {'regex ms':>20}  {'parse ms (min–max)':>24}"
          f"{'ratio':>7}{'growth':>8}{'cpu ms':>9}" + ("   stream/64 ms" if args.stream else "")
          + ("  before cpu ms  after/before" if before is not None else ""))
    over = []
    for name in SHAPES:
        found = len(parse_markers(texts[name]).markers)
        by_regex = len(MARKER_REGEX.findall(texts[name]))
        median = statistics.median(parse[name])
        growth = median / statistics.median(quarter[name])
        ratio = median / statistics.median(regex[name])
        print(f"{name:<18}{found:>8}{by_regex:>7}  {spread(regex[name]):>20}  {spread(parse[name]):>24}"
              f"{ratio:>6.0f}x{growth:>8.2f}{statistics.median(cpu[name]) * 1e3:>9.1f}"
              + (f"   {spread(stream[name])}" if args.stream else "")
              + (f"  {statistics.median(cpu_before[name]) * 1e3:13.1f}"
                 f"  {statistics.median(cpu[name]) / statistics.median(cpu_before[name]):12.2f}"
                 if before is not None else ""))
        if statistics.median(cpu[name]) * 1e3 > TARGET_1MB_MS:
            over.append(name)
    print(f"medians of {args.rounds} interleaved rounds; growth = 1 MB / 0.25 MB parse time (linear = 4.00); "
          f"cpu = the parse's process CPU time (less inflated than wall time when the machine is shared); "
          f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"target ≤ {TARGET_1MB_MS:.0f} ms of CPU per 1 MB shape: " + ("OK" if not over else "OVER: " + ", ".join(over)))
    return 0 if not over else 1


if __name__ == "__main__":
    raise SystemExit(main())
