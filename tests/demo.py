#!/usr/bin/env python3
"""The crash-storm demo: 16 processes of 64 MB crash at once on a disk that
writes 40 MB/s, while a probe measures what an fdatasync costs.

    make demo            (DEMO_CRASHES and DEMO_MB change the storm)
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import storm  # noqa: E402
import vm  # noqa: E402

# Until the agent does it: a dump cgroup limited to 30 MB/s of the disk's
# 40, two dumps writing at a time. Each knob is set where the kernel has it.
CORE_CGROUP = """
mkdir -p /sys/fs/cgroup/coredump
majmin=$(cat /sys/block/${SCRATCH_DEV#/dev/}/dev)
echo "$majmin wbps=30000000" > /sys/fs/cgroup/coredump/io.max
for knob in core_cgroup=/coredump core_max_concurrency=2; do
    f=/proc/sys/kernel/${knob%%=*}
    if [ -e $f ]; then echo ${knob#*=} > $f; else echo "kernel lacks $f" >> $RESULTS/missing; fi
done
"""


def patched_has_feature():
    p = vm.KERNELS / "patched-vm" / "bzImage"
    if not p.exists():
        return False
    series = (vm.TOP / "kernel-patch" / "series").read_text().split()
    return bool(series)


def main():
    crashes = int(os.environ.get("DEMO_CRASHES", 16))
    mb = int(os.environ.get("DEMO_MB", 64))
    print(f"coredam demo: {crashes} processes of {mb} MB crash at once; "
          f"the disk writes 40 MB/s; a probe writes 4 KiB + fdatasync every 50 ms",
          flush=True)
    results = []
    print("  running: stock kernel, file core_pattern, no limits ...", flush=True)
    results.append(storm.run("stock", "stock", crashes=crashes, mb=mb))
    if patched_has_feature():
        print("  running: patched kernel, core_cgroup io.max 30 MB/s, "
              "2 dumps at a time ...", flush=True)
        results.append(storm.run("coredam", "patched", setup_script=CORE_CGROUP,
                                 crashes=crashes, mb=mb))
    print()
    print(storm.table(results))
    for r in results:
        if r.stats:
            print(f"{r.setup}: core_dump_stats: {r.stats}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
