"""The test kernels and guest images `make kernel`, `make initramfs` and
`make rootfs` build, and how a report names a kernel."""

import hashlib
import os
import re
from pathlib import Path

from .paths import BUILD

KERNELS = BUILD / "kernels"
INITRAMFS = BUILD / "initramfs.cpio.gz"
ROOTFS = BUILD / "rootfs" / "debian.img"
# the Debian unstable guest with systemd 262 (make rootfs-sid)
ROOTFS_SID = BUILD / "rootfs" / "debian-sid.img"


# the make target that builds each flavor
MAKE_TARGET = {"stock": "make kernel", "patched": "make kernel",
               "v1": "make kernel-v1", "stock-7.3": "make kernel-7.3",
               "patched-7.3": "make kernel-patched-7.3"}


def kernel_path(kernel, config="vm"):
    """"stock", "patched" (with `config`), "v1" (series v1, for the
    benchmark), "stock-7.3" (stock Linux 7.3, for the coredump socket),
    "patched-7.3" (7.3 with kernel-patch/7.3), "patched-debug" or
    "stock-7.3-vm" (FLAVOR-CONFIG), or a path to a bzImage."""
    m = re.fullmatch(r"(stock-7\.3|patched-7\.3|stock|patched|v1)(?:-(\w+))?", kernel)
    if m:
        p = KERNELS / f"{m.group(1)}-{m.group(2) or config}" / "bzImage"
        if not p.exists():
            raise FileNotFoundError(f"{p} missing: run '{MAKE_TARGET[m.group(1)]}' first")
        return p
    return Path(kernel)


def kernel_override(kernel):
    """The bzImage BENCH_KERNEL_<KERNEL> names instead of `kernel`, or None."""
    return os.environ.get(f"BENCH_KERNEL_{kernel.upper()}") or None


def kernel_id(kernel):
    """How the report names a kernel: the cache directory `make kernel`
    built it in, or, for BENCH_KERNEL_<KERNEL>, the variable and the start
    of the file's sha256 (not its path)."""
    path = kernel_override(kernel)
    if path:
        return (f"BENCH_KERNEL_{kernel.upper()}, sha256 "
                f"{hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]}")
    return kernel_path(kernel).parent.resolve().name
