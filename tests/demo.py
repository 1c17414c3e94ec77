#!/usr/bin/env python3
"""The crash-storm demo: 16 processes of 64 MB crash at once on a disk that
writes 40 MB/s, while a probe in its own cgroup writes 4 KiB and calls
fdatasync every 50 ms. Stock Linux 6.12 against the patched kernel with
coredamd in adaptive mode, in the same run.

    make demo        (DEMO_CRASHES and DEMO_MB change the storm)

Prints a table; writes build/demo/report.md and build/demo/latency.png.
"""

import datetime
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import report, setups, storms  # noqa: E402
from harness.parsers import stats_dict  # noqa: E402
from harness.paths import BUILD  # noqa: E402
from harness.stats import physical_limit_s  # noqa: E402

# the benchmark's setups of the same names
SETUPS = [s for s in setups.SETUPS if s.name in ("stock", "coredam-adaptive")]


def main():
    crashes = int(os.environ.get("DEMO_CRASHES", 16))
    mb = int(os.environ.get("DEMO_MB", 64))
    out = BUILD / "demo"
    out.mkdir(parents=True, exist_ok=True)
    print(f"coredam demo: {crashes} processes of {mb} MB crash at once; the disk "
          f"writes 40 MB/s; a probe writes 4 KiB + fdatasync every 50 ms", flush=True)
    results = []
    for s in SETUPS:
        print(f"  running {s.name}: {s.describe} ...", flush=True)
        results.append(storms.run(s, crashes=crashes, mb=mb))
    table = report.table(results)
    limit = physical_limit_s(crashes, mb)
    print()
    print(table)
    print(f"\n'last core': from the crashes until every core is on disk (sync); "
          f"'vs disk': that time over the disk's own {limit:.1f} s for "
          f"{crashes * mb} MB.")
    for r in results:
        if r.stats:
            print(f"{r.setup}: kernel counters: {stats_dict(r.stats)}")
    report.plot(results, out / "latency.png",
                f"{crashes} x {mb} MB crash at once, disk 40 MB/s")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    (out / "report.md").write_text(
        f"# coredam demo, {when}\n\n"
        f"Command: `make demo`. {crashes} processes of {mb} MB crash at once; "
        f"QEMU TCG, one guest CPU, 3 GiB, ext4 on a virtio disk throttled to 40 MB/s.\n\n"
        + "\n".join(f"- `{s.name}`: {s.describe}" for s in SETUPS) + "\n\n"
        + table + "\n\n![probe latency](latency.png)\n")
    (out / "results.json").write_text(report.to_json(results))
    print(f"\nreport: {out / 'report.md'}, plot: {out / 'latency.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
