"""Marker parser speed on adversarial replies: the 1 MB case and linear growth with size.

The message mixes thousands of unclosed markers (each opener alone on its line, the kind changing
every time, so every one starts a block that cuts the previous one short), openers buried in prose,
deeply nested lists, score lines, backtick runs, fences and stray ``<!--``. The baseline is
``str.splitlines()`` on the same text, measured in the same run.

Run: ``python bench/markers_parse.py``
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tunaflow_tui.core.markers import MarkerStream, parse_markers, scrub_markers

TARGET_1MB_MS = 100.0


def adversarial(size: int) -> str:
    """An adversarial reply of about ``size`` characters."""
    parts: list[str] = []
    total = 0
    n = 0
    while total < size:
        n += 1
        depth = n % 60
        nested = "".join("  " * d + f"{d + 1}. item {d} `x` **b**\n" for d in range(depth))
        kind = ("plan-proposal", "review-verdict", "consensus")[n % 3]
        unit = (
            f"<!-- tunaflow:{kind} -->\n# Plan {n}\nsubtasks\n{nested}"
            f"<!--  tunaflow : subtask-done : {n} -->\n<!-- not closed <!-- <!-- tunaflow:review-verdict -->\n"
            f"verdict: PASS\nplan_coverage: 4/5\n- code_quality: 9\nfailed_subtask_ids: [{n}, 2]\n"
            f"``` `` ` <!-- tunaflow:impl-complete --> `` ```\n```markdown\n<!-- tunaflow:consensus -->\n"
            f"| a | b |\n```\n한국어 서브태스크 <!-- tunaflow:subtask-done:N -->\n"
        )
        parts.append(unit)
        total += len(unit)
    return "".join(parts)[:size]


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """Best wall time of ``repeat`` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def stream_all(text: str, chunk: int = 64) -> None:
    """Feed ``text`` to a MarkerStream in ``chunk``-sized pieces, then finish it."""
    stream = MarkerStream()
    for i in range(0, len(text), chunk):
        stream.feed(text[i : i + chunk])
    stream.finish()


def main() -> None:
    """Print timings per size, ratios to the baseline, and growth between sizes."""
    mb = 1_000_000
    print(f"{'size':>7} {'markers':>8} {'splitlines':>11} {'parse':>9} {'ratio':>7} {'scrub':>8} {'stream/64':>10}")
    previous: float | None = None
    growth: list[float] = []
    one_mb = 0.0
    for fraction in (0.25, 0.5, 1.0, 2.0):
        text = adversarial(int(fraction * mb))
        base = best_of(text.splitlines)
        parse = best_of(lambda t=text: parse_markers(t))
        scrub = best_of(lambda t=text: scrub_markers(t), 3)
        stream = best_of(lambda t=text: stream_all(t), 1)
        count = len(parse_markers(text).markers)
        print(f"{fraction:>5} MB {count:>8} {base * 1e3:>9.2f}ms {parse * 1e3:>7.1f}ms {parse / base:>6.0f}x"
              f" {scrub * 1e3:>6.1f}ms {stream * 1e3:>8.1f}ms")  # fmt: skip
        if previous is not None:
            growth.append(parse / previous)
        previous = parse
        if fraction == 1.0:
            one_mb = parse
    print("parse time ratio per doubling of size:", ", ".join(f"{g:.2f}" for g in growth), "(linear = 2.00)")
    verdict = "OK" if one_mb * 1e3 <= TARGET_1MB_MS else "OVER TARGET"
    print(f"1 MB adversarial parse: {one_mb * 1e3:.1f} ms (target ≤ {TARGET_1MB_MS:.0f} ms): {verdict}")


if __name__ == "__main__":
    main()
