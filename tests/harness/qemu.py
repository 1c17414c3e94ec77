"""Boot a test kernel under QEMU, run a job in the guest, get its results.

    from harness.qemu import boot
    res = boot(kernel="stock", script="crasher -m 8; true",
               sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    res.rc, res.output, res.console, res.results_dir

The guest is the busybox initramfs from scripts/mkinitramfs.sh, or, with
rootfs=ROOTFS, the Debian 12 image from scripts/mkrootfs.sh booted with
systemd as PID 1 (the root is a snapshot: nothing a job does to it stays).
The job goes in and its results come back on disks of their own (job.py).
Nothing is read from the console but kernel splats (console.find_splat): a
panic, a WARN (panic_on_warn=1), a BUG, a lockdep report, an RCU stall or a
hang are errors of their own, with the console log attached. So is a kernel
that tainted itself: the guest records /proc/sys/kernel/tainted as the
job's last step, and it must be 0.

The scratch disk is a fresh ext4 image whose writes QEMU throttles to
disk_bps_write bytes a second, so that disk contention in the guest is real
and repeatable from run to run.
"""

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from .console import GuestError, GuestKernelSplat, GuestPanic, GuestTimeout, \
    check_taint, find_splat
from .job import Result, extract, make_job
from .kernels import INITRAMFS, kernel_path
from .paths import BUILD, LOGS


def make_scratch(path, size_mb):
    with open(path, "wb") as f:
        f.truncate(size_mb << 20)
    subprocess.run(
        ["mkfs.ext4", "-q", "-F", "-L", "scratch",
         "-E", "lazy_itable_init=0,lazy_journal_init=0", str(path)],
        check=True)


def accel():
    """TCG unless COREDAM_KVM=1 asks for KVM and /dev/kvm can be opened:
    nested KVM is not to be relied on (it can hang at boot), so it is an
    opt-in for machines where it is known to work."""
    if os.environ.get("COREDAM_KVM") == "1":
        try:
            os.close(os.open("/dev/kvm", os.O_RDWR))
            return "kvm"
        except OSError:
            pass
    return "tcg,thread=multi"


def clock_args():
    """Under TCG the guest's TSC counts at the host's TSC rate, but the guest
    cannot calibrate it (no HPET or PM timer without ACPI) and falls back to
    jiffies: 4 ms steps, too coarse for a latency probe. Tell it the rate."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("cpu MHz"):
                khz = int(float(line.split(":")[1]) * 1000)
                return f"tsc_early_khz={khz} tsc=reliable"
    except (OSError, ValueError):
        pass
    return ""


# a boot that would have less than this left of the run's budget is not started
MIN_BOOT_S = 60


def within_deadline(timeout, log_dir):
    """The boot's timeout, cut to what is left of the run's budget:
    COREDAM_DEADLINE (seconds since the epoch, set by `make test`) is when
    the whole run must be done, so that a hanging test fails on its own,
    with its console tail, and the run still ends with pytest's summary.
    Returns (timeout, whether the budget cut it)."""
    deadline = os.environ.get("COREDAM_DEADLINE")
    if not deadline:
        return timeout, False
    left = int(deadline) - time.time()
    if left < MIN_BOOT_S:
        raise GuestTimeout(f"the run's time budget is spent (COREDAM_DEADLINE "
                           f"{deadline}, {int(left)}s left): not booting", "", log_dir)
    if left < timeout:
        return int(left), True
    return timeout, False


def boot(script, kernel="stock", config="vm", sysctls=None, files=None,
         timeout=600, mem=None, smp=2, disk_mb=4096,
         disk_bps_write=40_000_000, disk_bps_read=None, results_mb=256,
         scratch=True, cmdline="", name=None, check_splat=True, rootfs=None):
    """Boot `kernel`, run `script` (busybox sh, `set -e`) in the guest.

    Returns a Result; raises GuestPanic, GuestTimeout or GuestKernelSplat
    when the guest gave no result or the kernel complained or tainted
    itself. check_splat=False leaves the console and the taint unchecked.
    mem is the guest's memory: 3G unless COREDAM_VM_MEM says otherwise
    (the debug kernel's tests use 1G: KASAN's shadow and kmemleak's scan
    grow with it, and they need no more).
    """
    mem = mem or os.environ.get("COREDAM_VM_MEM", "3G")
    kpath = kernel_path(kernel, config)
    if rootfs is None and not INITRAMFS.exists():
        raise FileNotFoundError(f"{INITRAMFS} missing: run 'make initramfs'")
    if rootfs is not None and not Path(rootfs).exists():
        raise FileNotFoundError(f"{rootfs} missing: run 'make rootfs' (debian-sid.img: 'make rootfs-sid')")
    name = name or os.environ.get("PYTEST_CURRENT_TEST", "vm").split(" ")[0]
    log_dir = LOGS / re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    shutil.rmtree(log_dir, ignore_errors=True)
    log_dir.mkdir(parents=True)

    timeout, cut = within_deadline(timeout, log_dir)
    work = Path(tempfile.mkdtemp(prefix="vm-", dir=BUILD))
    try:
        job = work / "job.tar"
        make_job(job, script, sysctls, files, scratch)
        res_img = work / "results.img"
        with open(res_img, "wb") as f:
            f.truncate(results_mb << 20)
        drives = [("coredam-job", job, "readonly=on"),
                  ("coredam-results", res_img, "")]
        if scratch:
            img = work / "scratch.img"
            make_scratch(img, disk_mb)
            throttle = f"throttling.bps-write={disk_bps_write}" if disk_bps_write else ""
            if disk_bps_read:
                throttle += f",throttling.bps-read={disk_bps_read}"
            drives.insert(0, ("coredam-scratch", img, throttle.strip(",")))
        if rootfs is not None:
            # first, so that it is /dev/vda; QEMU keeps the writes elsewhere
            drives.insert(0, ("coredam-root", Path(rootfs).resolve(), "snapshot=on"))
            boot_args = ["-append"]
            init = "root=/dev/vda rw rootfstype=ext4 init=/lib/systemd/systemd"
        else:
            boot_args = ["-initrd", str(INITRAMFS), "-append"]
            init = "rdinit=/init"

        console = log_dir / "console.log"
        # no_timer_check: the IO-APIC timer check counts ticks against the
        # TSC, and a TCG guest on a loaded host misses them and panics
        # ("IO-APIC + timer doesn't work"), as KVM guests would
        append = ("console=ttyS0 panic=-1 panic_on_warn=1 oops=panic no_timer_check "
                  f"{init} {clock_args()} {cmdline}").strip()
        cmd = ["qemu-system-x86_64", "-accel", accel(),
               "-smp", str(smp), "-m", mem, "-no-reboot",
               "-display", "none", "-monitor", "none",
               "-serial", f"file:{console}",
               "-kernel", str(kpath)] + boot_args + [append]
        for i, (serial, path, opts) in enumerate(drives):
            spec = f"if=none,id=d{i},file={path},format=raw,cache=unsafe"
            if opts:
                spec += "," + opts
            cmd += ["-drive", spec,
                    "-device", f"virtio-blk-pci,drive=d{i},serial={serial}"]
        (log_dir / "qemu-cmd.txt").write_text(" ".join(cmd) + "\n")

        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            qemu_out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            text = console.read_text(errors="replace") if console.exists() else ""
            why = " (what was left of the run's budget)" if cut else ""
            raise GuestTimeout(f"guest did not finish within {timeout}s{why}", text, log_dir)
        wall = time.monotonic() - t0
        text = console.read_text(errors="replace") if console.exists() else ""
        if proc.returncode != 0:
            raise GuestError(f"qemu exited with {proc.returncode}: "
                             f"{qemu_out.decode(errors='replace')}", text, log_dir)

        out_dir = log_dir / "results"
        out_dir.mkdir()
        got = False
        try:
            extract(res_img, out_dir)
            got = (out_dir / "rc").exists()
        except tarfile.TarError:
            pass
        if not got:
            if "Kernel panic" in text:
                raise GuestPanic("kernel panicked before the job finished", text, log_dir)
            raise GuestError("guest gave back no result", text, log_dir)
        splat = find_splat(text)
        if check_splat and splat:
            raise GuestKernelSplat(f"kernel reported '{splat}'", text, log_dir)
        if check_splat:
            check_taint(out_dir, text, log_dir)
        rc = int((out_dir / "rc").read_text().strip())
        output = (out_dir / "output.log").read_text(errors="replace") \
            if (out_dir / "output.log").exists() else ""
        return Result(rc=rc, output=output, console=text, results_dir=out_dir,
                      log_dir=log_dir, wall_s=wall)
    finally:
        shutil.rmtree(work, ignore_errors=True)
