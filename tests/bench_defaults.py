#!/usr/bin/env python3
"""Does the patched kernel cost anything with every knob at its default?

Boots the stock and the patched kernel in turn (ROUNDS times each, default
3), and in each boot crashes N small processes (default 40 of 1 MB) one
after the other, timing each from its signal to its parent's waitpid(),
core written to ext4 included. Prints the median crash-to-exit time of
each kernel and their ratio.

    make bench-defaults        (ROUNDS, CRASHES change the run)
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.crashtime import measure  # noqa: E402


def main():
    rounds = int(os.environ.get("ROUNDS", 3))
    crashes = int(os.environ.get("CRASHES", 40))
    times = {}
    med = measure(rounds, crashes, times)
    ratio = med["patched"] / med["stock"]
    print(f"\ncrash-to-exit, {rounds} x {crashes} crashes of 1 MB per kernel, "
          f"knobs at default:")
    print("| kernel | median | p90 |\n|---|---|---|")
    for k, v in times.items():
        p90 = sorted(v)[int(0.9 * (len(v) - 1))] / 1000
        print(f"| {k} | {med[k]:.2f} ms | {p90:.2f} ms |")
    print(f"\npatched / stock median: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
