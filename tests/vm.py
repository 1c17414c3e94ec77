"""Boot a test kernel under QEMU, run a job in the guest, get its results.

    from vm import boot
    res = boot(kernel="stock", script="crasher -m 8; true",
               sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    res.rc, res.output, res.console, res.results_dir

The guest is the busybox initramfs from scripts/mkinitramfs.sh, or, with
rootfs=ROOTFS, the Debian 12 image from scripts/mkrootfs.sh booted with
systemd as PID 1 (the root is a snapshot: nothing a job does to it stays).
The job
goes in on a disk with serial "coredam-job" (a tar: run.sh, sysctls, the
files asked for) and comes back on a disk with serial "coredam-results"
(a tar of $RESULTS with the job's exit status in rc). Nothing is read from
the console but kernel splats (find_splat): a panic, a WARN (panic_on_warn=1),
a BUG, a lockdep report, an RCU stall or a hang are errors of their own, with
the console log attached. So is a kernel that tainted itself: the guest records
/proc/sys/kernel/tainted as the job's last step, and it must be 0.

The scratch disk is a fresh ext4 image whose writes QEMU throttles to
disk_bps_write bytes a second, so that disk contention in the guest is real
and repeatable from run to run.
"""

import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
BUILD = TOP / "build"
KERNELS = BUILD / "kernels"
INITRAMFS = BUILD / "initramfs.cpio.gz"
ROOTFS = BUILD / "rootfs" / "debian.img"
# COREDAM_LOGS: another place for the boot logs, for a second pytest run at
# the same time (make test runs the debug kernel's tests beside the others)
LOGS = Path(os.environ.get("COREDAM_LOGS") or BUILD / "vm-logs")

# A kernel line on the console starts with its printk timestamp (and, with
# CONFIG_PRINTK_CALLER, the caller's id); the job's output copied there has
# none, so a job may print "WARNING: " without failing its boot.
_PRINTK = r"\[\s*\d+\.\d+\](?:\[\s*[CT]\d+\])? "

# Report headers that mean the kernel is unhappy even when the job finished.
SPLAT = re.compile("|".join([
    r"Kernel panic - not syncing",
    r"\bBUG: ",                   # BUG(), soft lockup, KASAN, lockdep's "[ BUG: ... ]"
    _PRINTK + r"WARNING: ",       # WARN(), every lockdep header, suspicious RCU usage
    r"INFO: task .* blocked for more than",
    r"INFO: \S+ (?:self-)?detected (?:expedited )?stall",    # RCU, RCU tasks
    r"INFO: Stall ended before state dump start",
    r"Watchdog detected hard LOCKUP",
    r"list_(?:add|del) corruption",
    r"Oops: ",
    r"general protection fault",
    r"UBSAN: ",
    r"KASAN: ",
    r"kmemleak: .* new suspected memory leaks",
]))


def find_splat(console):
    """The first console line with a kernel report header, stripped; None
    when the kernel reported nothing."""
    m = SPLAT.search(console)
    if not m:
        return None
    start = console.rfind("\n", 0, m.start()) + 1
    end = console.find("\n", m.end())
    return console[start:end if end >= 0 else len(console)].strip()


# /proc/sys/kernel/tainted, bit by bit, as
# Documentation/admin-guide/tainted-kernels.rst has it
TAINTS = [
    ("P", "proprietary module"), ("F", "force-loaded module"),
    ("S", "out-of-spec system"), ("R", "force-unloaded module"),
    ("M", "machine check"), ("B", "bad page"),
    ("U", "taint requested by userspace"), ("D", "kernel died: oops or BUG"),
    ("A", "ACPI table overridden"), ("W", "kernel warning"),
    ("C", "staging driver"), ("I", "firmware workaround"),
    ("O", "out-of-tree module"), ("E", "unsigned module"),
    ("L", "soft lockup"), ("K", "live patched"), ("X", "auxiliary taint"),
    ("T", "struct randomization"), ("N", "in-kernel test"),
]


def decode_taint(value):
    """"O: out-of-tree module, ..." for a value of /proc/sys/kernel/tainted."""
    out = []
    for bit in range(value.bit_length()):
        if value >> bit & 1:
            letter, what = TAINTS[bit] if bit < len(TAINTS) else ("?", f"bit {bit}")
            out.append(f"{letter}: {what}")
    return ", ".join(out)


class GuestError(Exception):
    """The guest did not give back a result; the console log tells why."""

    def __init__(self, what, console, log_dir):
        tail = "\n".join(console.splitlines()[-60:])
        super().__init__(f"{what} (console log: {log_dir}/console.log)\n"
                         f"--- last console lines ---\n{tail}")
        self.console = console
        self.log_dir = log_dir


class GuestPanic(GuestError):
    pass


class GuestTimeout(GuestError):
    pass


class GuestKernelSplat(GuestError):
    pass


@dataclass
class Result:
    rc: int
    output: str
    console: str
    results_dir: Path
    log_dir: Path
    wall_s: float
    files: dict = field(default_factory=dict)

    def path(self, name):
        return self.results_dir / name

    def text(self, name):
        return (self.results_dir / name).read_text()

    def json_lines(self, name):
        """Every line of a results file that parses as JSON."""
        out = []
        for line in self.text(name).splitlines():
            line = line.strip()
            if line.startswith("{"):
                out.append(json.loads(line))
        return out


def kernel_path(kernel, config="vm"):
    """"stock", "patched" (with `config`), "v1" (series v1, for the
    benchmark), "patched-debug" (FLAVOR-CONFIG), or a path to a bzImage."""
    m = re.fullmatch(r"(stock|patched|v1)(?:-(\w+))?", kernel)
    if m:
        p = KERNELS / f"{m.group(1)}-{m.group(2) or config}" / "bzImage"
        if not p.exists():
            make = "make kernel-v1" if m.group(1) == "v1" else "make kernel"
            raise FileNotFoundError(f"{p} missing: run '{make}' first")
        return p
    return Path(kernel)


def _make_job(path, script, sysctls, files, scratch):
    with tarfile.open(path, "w") as tar:
        def add(name, data, mode=0o644):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))

        add("run.sh", script.encode(), 0o755)
        if sysctls:
            lines = "".join(f"{k}={v}\n" for k, v in sysctls.items())
            add("sysctls", lines.encode())
        if not scratch:
            add("no-scratch", b"")
        for name, src in (files or {}).items():
            if isinstance(src, (bytes, str)) and not isinstance(src, Path):
                data = src.encode() if isinstance(src, str) else src
                add(name, data, 0o755)
            else:
                tar.add(str(src), arcname=name)


def _make_scratch(path, size_mb):
    with open(path, "wb") as f:
        f.truncate(size_mb << 20)
    subprocess.run(
        ["mkfs.ext4", "-q", "-F", "-L", "scratch",
         "-E", "lazy_itable_init=0,lazy_journal_init=0", str(path)],
        check=True)


def _accel():
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


def _clock_args():
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


def _within_deadline(timeout, log_dir):
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
        raise FileNotFoundError(f"{rootfs} missing: run 'make rootfs'")
    name = name or os.environ.get("PYTEST_CURRENT_TEST", "vm").split(" ")[0]
    log_dir = LOGS / re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    shutil.rmtree(log_dir, ignore_errors=True)
    log_dir.mkdir(parents=True)

    timeout, cut = _within_deadline(timeout, log_dir)
    work = Path(tempfile.mkdtemp(prefix="vm-", dir=BUILD))
    try:
        job = work / "job.tar"
        _make_job(job, script, sysctls, files, scratch)
        res_img = work / "results.img"
        with open(res_img, "wb") as f:
            f.truncate(results_mb << 20)
        drives = [("coredam-job", job, "readonly=on"),
                  ("coredam-results", res_img, "")]
        if scratch:
            img = work / "scratch.img"
            _make_scratch(img, disk_mb)
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
        append = ("console=ttyS0 panic=-1 panic_on_warn=1 oops=panic "
                  f"{init} {_clock_args()} {cmdline}").strip()
        cmd = ["qemu-system-x86_64", "-accel", _accel(),
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
            _extract(res_img, out_dir)
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
            _check_taint(out_dir, text, log_dir)
        rc = int((out_dir / "rc").read_text().strip())
        output = (out_dir / "output.log").read_text(errors="replace") \
            if (out_dir / "output.log").exists() else ""
        return Result(rc=rc, output=output, console=text, results_dir=out_dir,
                      log_dir=log_dir, wall_s=wall)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _check_taint(out_dir, console, log_dir):
    """A kernel that tainted itself (a WARN that did not panic, a soft
    lockup, an oops in a thread that lived on) failed, whatever the console
    shows: runjob records /proc/sys/kernel/tainted as its last step."""
    f = out_dir / "tainted"
    if not f.exists():
        raise GuestError("guest gave back no tainted file", console, log_dir)
    value = int(f.read_text().strip())
    if value:
        raise GuestKernelSplat(f"kernel tainted: {value} ({decode_taint(value)})",
                               console, log_dir)


def _extract(tar_path, dest):
    """Extract regular files and directories of a guest's tar, refusing any
    name that would land outside dest."""
    dest = dest.resolve()
    with tarfile.open(tar_path) as tar:
        for m in tar:
            target = (dest / m.name).resolve()
            if target != dest and dest not in target.parents:
                raise tarfile.TarError(f"unsafe name in results: {m.name}")
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
            elif m.isfile():
                target.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(m) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)


def latency_stats(samples_us):
    """p50, p99, max of a list of latencies in microseconds, as ms."""
    if not samples_us:
        return {"n": 0, "p50": float("nan"), "p99": float("nan"), "max": float("nan")}
    s = sorted(samples_us)

    def pct(p):
        return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))] / 1000.0

    return {"n": len(s), "p50": pct(50), "p99": pct(99), "max": s[-1] / 1000.0}


def read_probe(path):
    """The probe's samples: (start_ms, latency_us) pairs, in order."""
    out = []
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:
            out.append((int(parts[0]), int(parts[1])))
    return out
