"""What masking secrets on the joined reply costs, against masking each piece on its own (the old way).

A reply of prose with code and, now and then, a registered secret or a well-known token, is fed to
:class:`~tunaflow_tui.core.secret_masking.StreamMasker` in pieces the size agents stream them
(8 characters, about a token; 256, a line; 4096, a flood), with six registered values (and their
encodings) plus the token patterns. The baseline, timed interleaved in the same run, is what
tunaflow did before: ``str.replace`` of every value in each piece on its own (which misses a secret
split across pieces). Each figure is the median of the rounds; the ratio is masker / baseline.

Run: ``python bench/secret_masking.py [--rounds 5] [--megabytes 2]``. Targets: token-sized pieces
at ≥ 0.1 MB/s (a hundred times what an agent streams), and a 4096-character flood at ≥ 2 MB/s (a
turn's whole 20 MB output cap in at most 10 s). The scan for matches is one regular expression
(``finditer`` over the text, the floor here); an Aho-Corasick automaton would be the next step.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tunaflow_tui.core.secret_masking import SecretRegistry, StreamMasker

SECRETS = [
    "sk-ant-api03-" + "x7Kq2" * 18,
    "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8",
    "hunter2-database-password-2026",
    "AIzaSyD" + "q" * 32,
    "xoxb-123456789012-abcdefABCDEF",
    "s3cr3t-V4lue-with-some-length",
]
PROSE = ("The function reads the configuration, then `load_settings(project)` merges the files; "
         "see src/app.py line 42 for the call.\n")


def reply(size: int, seed: int = 7) -> str:
    """About ``size`` characters of prose with a secret about every 20 KB."""
    rnd = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        part = PROSE if rnd.random() > 0.01 else f"key: {rnd.choice(SECRETS)}\n"
        parts.append(part)
        total += len(part)
    return "".join(parts)[:size]


def masked(registry: SecretRegistry, text: str, piece: int) -> float:
    masker = StreamMasker(registry)
    start = time.perf_counter()
    out = [masker.feed(text[at:at + piece]) for at in range(0, len(text), piece)]
    out.append(masker.flush(final=True))
    elapsed = time.perf_counter() - start
    assert not any(secret in "".join(out) for secret in SECRETS)
    return elapsed


def per_piece(text: str, piece: int) -> float:
    start = time.perf_counter()
    for at in range(0, len(text), piece):
        chunk = text[at:at + piece]
        for secret in SECRETS:
            if secret in chunk:
                chunk = chunk.replace(secret, "***")
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--megabytes", type=float, default=2.0)
    args = parser.parse_args()
    registry = SecretRegistry.build(SECRETS)
    print(f"{len(registry.literals)} literals (6 values and their encodings) + token patterns; "
          f"longest match {registry.longest}")
    print("| piece (chars) | reply | masker MB/s | per-piece baseline MB/s | masker / baseline time |")
    print("|---|---|---|---|---|")
    for piece, megabytes in ((8, args.megabytes / 8), (256, args.megabytes), (4096, args.megabytes)):
        text = reply(int(megabytes * 1_000_000))
        mine, base = [], []
        for _ in range(args.rounds):
            mine.append(masked(registry, text, piece))
            base.append(per_piece(text, piece))
        m, b = statistics.median(mine), statistics.median(base)
        size = len(text) / 1_000_000
        print(f"| {piece} | {size:.2f} MB | {size / m:.1f} | {size / b:.1f} | {m / b:.1f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
