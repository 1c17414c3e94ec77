"""What the guest's console says about its kernel: report headers (a panic,
a WARN, a BUG, lockdep, an RCU stall, a hang), the taint, and the errors a
boot raises when the guest gave back no result or its kernel complained."""

import re

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


def check_taint(out_dir, console, log_dir):
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
