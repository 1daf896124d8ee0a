"""How fast the terminal pane's emulator parses a coloured flood, against plain pyte on the same bytes.

Run: python bench/emulator_feed.py [--mb 2] [--rounds 3] [--piece 512]

The stream is what ``native_pane.py`` floods with: ~90-byte lines, a colour and bold per line, fed in
``--piece``-byte pieces (as the PTY session feeds them) to a 70×40 screen. The baseline is pyte's own
``Screen`` + ``ByteStream`` (no scrollback, no alternate screen, no filter), measured in the same run,
rounds interleaved. Prints MB/s per round and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import time

import pyte

from tunaflow_tui.agents.terminal.emulator import Emulator


def flood(megabytes: float) -> bytes:
    line = "\x1b[3{c}mflood line {n:06d} \x1b[1m" + "x" * 60 + "\x1b[0m\r\n"
    out, size, n = [], 0, 0
    while size < megabytes * 1e6:
        text = line.format(c=n % 8, n=n)
        out.append(text)
        size, n = size + len(text), n + 1
    return "".join(out).encode()


def rate(feed, data: bytes, piece: int) -> float:  # type: ignore[no-untyped-def]
    began = time.perf_counter()
    for start in range(0, len(data), piece):
        feed(data[start:start + piece])
    return len(data) / 1e6 / (time.perf_counter() - began)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--piece", type=int, default=512)
    args = parser.parse_args()
    data = flood(args.mb)
    ours, plain = [], []
    for _ in range(args.rounds):
        ours.append(rate(Emulator(70, 40, scrollback=10_000).feed, data, args.piece))
        plain.append(rate(pyte.ByteStream(pyte.Screen(70, 40)).feed, data, args.piece))
    print(f"pane emulator: {', '.join(f'{r:.2f}' for r in ours)} MB/s")
    print(f"plain pyte:    {', '.join(f'{r:.2f}' for r in plain)} MB/s")
    print(f"ratio of medians: {statistics.median(ours) / statistics.median(plain):.2f}x "
          f"({args.mb:g} MB, {args.piece}-byte pieces, {args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
