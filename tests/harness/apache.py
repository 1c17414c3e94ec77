"""The Apache storm: a prefork Apache with mod_php 8.2 and its opcache in
the Debian guest (systemd), whose workers die by SIGSEGV while wrk drives
its healthy route. What the VM test (tests/test_apache.py) and the
benchmark (tests/bench_apache.py) share: the readers of what the guest
wrote (tests/guest/apache.sh), the benchmark's setups, its job, its
figures and its table.

Every string here that came from the guest is read for numbers only:
the error log's lines are a crashed process's neighbours, never printed."""

import gzip
import json
import re
import subprocess
from dataclasses import dataclass

from . import corebt, elfcore
from .kernels import ROOTFS
from .parsers import name_values
from .qemu import boot as qemu_boot
from .report import markdown
from .setups import ADAPTIVE, FIXED
from .stats import pct

# Apache as both run it: exactly WORKERS prefork workers, an opcache
# segment of OPCACHE_MB MiB, WARM_MB MiB of it filled with compiled scripts
WORKERS = 6
OPCACHE_MB = 16
WARM_MB = 4

# Apache's parent, reaping a worker that died by SIGSEGV
CRASHED = re.compile(r"child pid (\d+) exit signal Segmentation fault \(11\)")
# ... and by any other signal
OTHER_SIGNAL = re.compile(r"child pid \d+ exit signal (?!Segmentation)")
# crash.php's line, as a worker takes a crash request
CRASH_START = re.compile(r"coredam-crash pid (\d+) port (\d+) ms (\d+)")
WRK_ERRORS = ("connect", "read", "write", "status", "timeout")


def crashed_pids(error_log):
    """The pids of the workers Apache reaped after a SIGSEGV, in order."""
    return [int(p) for p in CRASHED.findall(error_log)]


def other_deaths(error_log):
    """How many workers Apache reaped after a signal other than SIGSEGV."""
    return len(OTHER_SIGNAL.findall(error_log))


def crash_starts(error_log):
    """{client port: (worker pid, CLOCK_MONOTONIC ms)} of crash.php's lines:
    which worker took which crash request, and when it began to crash."""
    return {int(port): (int(pid), int(ms)) for pid, port, ms in CRASH_START.findall(error_log)}


def crash_rows(text):
    """crash-client.php's lines: [(sent_ms, end_ms, port, bytes)], end_ms
    None for a connection still open at the client's limit."""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        sent, end, port, nbytes = (int(w) for w in line.split())
        rows.append((sent, None if end < 0 else end, port, nbytes))
    return rows


def wrk_errors(summary):
    """Every error wrk counted: connect, read, write, timeout, and answers
    other than 2xx or 3xx."""
    return sum(summary[k] for k in WRK_ERRORS)


def scoreboard(text):
    """scoreboard_watch's lines: [(ms, busy, idle, scoreboard, procs)]."""
    out = []
    for line in text.splitlines():
        w = line.split()
        if len(w) == 5:
            out.append((int(w[0]), int(w[1]), int(w[2]), w[3], int(w[4])))
    return out


def full(sb, workers):
    """Does the scoreboard string show every one of the workers' slots with
    a live worker: no slot without a process (".") or starting ("S")? A
    crashed worker holds its slot ("W") until Apache reaps it."""
    slots = sb[:workers]
    return len(slots) == workers and "." not in slots and "S" not in slots


def new_pids(text, starts=()):
    """When each new worker first showed: [(ms, pid)] in that order, of
    every pid pids.txt's first line ("MS PID...") lacks, from its later
    lines and from crash.php's (pid, ms) in starts: a worker that took a
    crash request was alive then, though the 0.5 s samples of a busy
    guest may have missed it."""
    seen, first = None, {}
    for line in text.splitlines():
        w = [int(x) for x in line.split()]
        if not w:
            continue
        if seen is None:
            seen = set(w[1:])
            continue
        for pid in w[1:]:
            if pid not in seen:
                first[pid] = min(first.get(pid, w[0]), w[0])
    if seen is None:
        return []
    for pid, ms in starts:
        if pid not in seen:
            first[pid] = min(first.get(pid, ms), ms)
    return sorted((ms, pid) for pid, ms in first.items())


def healthy_samples(text):
    """healthy-watch.php's lines: [(sent_ms, latency_ms, ok)], latency_ms
    None for the request still waiting when the watch stopped."""
    out = []
    for line in text.splitlines():
        w = line.split()
        if len(w) == 3:
            sent, lat, ok = (int(x) for x in w)
            out.append((sent, None if lat < 0 else lat, bool(ok)))
    return out


def meminfo(text):
    """meminfo_watch's lines: [(ms, MemAvailable kB)]."""
    return [tuple(int(w) for w in line.split()) for line in text.splitlines()
            if len(line.split()) == 2]


def read_core(path):
    """A core brought back by collect_cores, decompressed (.gz, or .zst as
    systemd-coredump stores them)."""
    if path.name.endswith(".gz"):
        return gzip.decompress(path.read_bytes())
    if path.name.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", str(path)], check=True,
                              capture_output=True).stdout
    return path.read_bytes()


def check_core(data):
    """Is data a whole ELF core of an apache2 worker that died by SIGSEGV
    (harness.elfcore: every segment within the file)? (ok, why not)"""
    try:
        c = elfcore.parse(data)
    except Exception as e:  # ValueError, or struct.error on a cut file
        return False, f"not a whole core: {type(e).__name__}"
    if c["fname"] != "apache2":
        return False, "not apache2's"
    if not (c["signal"] == 11 == c["si_signo"]):
        return False, "not a SIGSEGV"
    return True, ""


# crash.php's recursion as gdb shows it with no debug symbols: the
# executor calls array_map, which calls back into the executor
RECURSION = ("execute_ex", "zend_call_function")


def check_backtrace(data, tmp):
    """gdb's backtrace of a core's bytes @data (written into @tmp first,
    the sysroot made there kept for the next core), against the guest
    image's own binaries (harness.corebt): does it name the SIGSEGV, the
    crashing frame, and PHP's engine recursing through array_map as
    crash.php makes it? (ok, why not, frames)"""
    core = tmp / "core"
    core.write_bytes(data)
    text, frames = corebt.backtrace(core, ROOTFS, tmp)
    core.unlink()
    if "Program terminated with signal SIGSEGV" not in text:
        return False, "gdb names no SIGSEGV", frames
    # the frame it died in, in a file of the image's: a function's name
    # where the object exports one, its address in the object else
    if not frames or frames[0][0] != 0 or not frames[0][2]:
        return False, "no crashing frame", frames
    names = [fn for _, fn, obj in frames if obj and obj.endswith("/libphp8.2.so")]
    if not set(RECURSION) <= set(names):
        return False, "not PHP's recursion", frames
    return True, "", frames


# --- the benchmark's setups -------------------------------------------------

@dataclass
class ApacheSetup:
    name: str
    kernel: str
    describe: str
    script: str        # guest shell, before Apache starts


NO_DUMPS = r"""
systemctl stop coredamd
printf '\n' > /proc/sys/kernel/core_pattern
"""

# Debian's systemd-coredump as it comes: its sysctl file's core_pattern and
# core_pipe_limit, its socket's MaxConnections, its unit's RuntimeMaxSec,
# coredump.conf's defaults (Storage=external, Compress=yes, MaxUse=10%);
# the store on the scratch disk with the other setups' cores. coredam's
# agent stopped and its systemd-coredump@ drop-in (the workers in
# coredump.slice) removed: the image installs both
SYSTEMD_COREDUMP = r"""
systemctl stop coredamd
rm -f /usr/lib/systemd/system/systemd-coredump@.service.d/coredam.conf
systemctl daemon-reload
mkdir -p /scratch/coredump
mount --bind /scratch/coredump /var/lib/systemd/coredump
systemctl show -p MaxConnections systemd-coredump.socket > $RESULTS/coredump.socket
systemctl show -p RuntimeMaxUSec -p Slice -p Nice systemd-coredump@probe.service \
    > $RESULTS/coredump.service
"""

# coredamd as shipped (every default, [Repeats] Keep=2 included), its
# helper switched in as core_pattern, the cores on the scratch disk
COREDAM_PIPE = r"""
conf <<'EOF'
[Pipe]
SetCorePattern=yes
Directory=/scratch/cores
EOF
systemctl restart coredamd
"""

# stock 7.3's coredump socket served by coredamd as shipped (every default,
# [Repeats] Keep=2 included: a repeat is refused before a byte is sent),
# its writers storing where the helper would, which the unit must let
# coredamd write (deployment.md); coredam-socket.service names the socket
# in core_pattern once coredamd is ready
COREDAM_SOCKET = r"""
conf <<'EOF'
[Socket]
SetCorePattern=yes
[Pipe]
Directory=/scratch/cores
EOF
mkdir -p /etc/systemd/system/coredamd.service.d
printf '[Service]\nReadWritePaths=/scratch/cores\n' > /etc/systemd/system/coredamd.service.d/50-scratch.conf
systemctl daemon-reload
systemctl restart coredamd
waitfor 60 "coredam-socket.service active" systemctl -q is-active coredam-socket
"""

# the patched kernel's file dumps to the scratch disk (the workers run as
# www-data: a directory they can write, as /tmp), and the agent with the
# storm benchmark's configuration (harness.setups), followed to that disk
KERNEL_PATH = r"""
chmod 1777 /scratch/cores
echo /scratch/cores/core.%p > /proc/sys/kernel/core_pattern
conf <<'EOF'
{conf}
EOF
systemctl restart coredamd
m=$(majmin $SCRATCH_DEV)
waitfor 60 "io.max names $m" grep -q "^$m " /sys/fs/cgroup/coredump.slice/io.max
"""


# the same, each core streamed at the disk's pace ([Socket] ReadAhead=0):
# its worker held until the last of its core is read, as before that key
COREDAM_SOCKET_STREAMED = COREDAM_SOCKET.replace("[Socket]\nSetCorePattern=yes\n",
                                                 "[Socket]\nSetCorePattern=yes\nReadAhead=0\n")


def kernel_path(conf):
    return KERNEL_PATH.format(conf=conf.strip().replace("@QUEUE_CAP@", "64"))


SETUPS = [
    ApacheSetup("no-dumps", "stock",
                "stock 6.12, empty core_pattern, no agent: the same crashes, no core "
                "written (the floor)", NO_DUMPS),
    ApacheSetup("systemd-coredump", "stock",
                "stock 6.12, Debian 12's systemd-coredump as it comes (core_pipe_limit=16, "
                "MaxConnections=16, RuntimeMaxSec=5min, zstd-compressed, MaxUse=10%), no agent",
                SYSTEMD_COREDUMP),
    ApacheSetup("coredam-pipe", "stock",
                "stock 6.12 + coredamd and coredam-pipe with the shipped defaults (10 MB/s, "
                "2 at once, 64 waiting, [Repeats] Keep=2 an hour)", COREDAM_PIPE),
    ApacheSetup("coredam-socket", "stock-7.3",
                "stock 7.3 + coredamd serving the coredump socket (@@) with the shipped "
                "defaults (10 MB/s, 2 at once, 64 waiting, [Repeats] Keep=2 an hour: repeats "
                "refused before a byte is sent)", COREDAM_SOCKET),
    ApacheSetup("coredam-socket-streamed", "stock-7.3",
                "coredam-socket with [Socket] ReadAhead=0: each kept core streamed at the "
                "disk's pace, its worker held until the last of it is read (the default "
                "reads up to 256 MiB of it into memory at once)", COREDAM_SOCKET_STREAMED),
    ApacheSetup("coredam-fixed", "patched",
                "patched 6.12 + coredamd, file dumps, fixed 10 MB/s, 2 at once, 64 waiting",
                kernel_path(FIXED)),
    ApacheSetup("coredam-adaptive", "patched",
                "patched 6.12 + coredamd, file dumps, adaptive 10-30 MB/s (no limit while "
                "nobody else uses the disk), 1-2 at once, 64 waiting", kernel_path(ADAPTIVE)),
]


# --- the job ----------------------------------------------------------------

# Apache started and warmed; wrk alone on the healthy route (the baseline);
# then wrk again while crash-client.php sends the crash requests, from a
# second after wrk starts; until every crash connection has ended, every
# dump is over and Apache is back to its workers; the setup's counters
# every Apache job's start (test_apache.py's too): the guest's shell
# functions, and the cores' directory on the scratch disk
JOB_HEAD = r"""
. /lib/coredam/lib.sh
. /lib/coredam/systemd.sh
. /lib/coredam/apache.sh
mkdir -p /scratch/cores
chmod 755 /scratch/cores
"""

JOB = JOB_HEAD + r"""{setup}
cat /proc/sys/kernel/core_pattern > $RESULTS/core_pattern
cat /proc/sys/kernel/core_pipe_limit > $RESULTS/core_pipe_limit
apache_start {workers} {opcache_mb}
apache_warm {warm_mb}
drive {base_s} /healthy.php $RESULTS/baseline.json
meminfo_watch &
scoreboard_watch &
healthy_watch &
drive {drive_s} /healthy.php $RESULTS/storm.json &
driver=$!
sleep 1
crash_at {per_s} {crash_s} {limit_s}
wait $driver
waitfor {limit_s} "the dumps to end" dumps_done || echo "dumps still running" > $RESULTS/dumps.left
waitfor 300 "Apache back to {workers} workers" apache_full {workers} || true
sleep 2
touch /tmp/stop-scoreboard /tmp/stop-meminfo /tmp/stop-healthy
wait
cp /var/log/apache2/error.log $RESULTS/error.log
cp /run/coredam/pipe/stats $RESULTS/pipe-stats 2>/dev/null || true
cat $KSTATS > $RESULTS/kstats 2>/dev/null || true
coredamctl status --json > $RESULTS/status.json 2>/dev/null || true
coredumpctl list --no-legend -q --no-pager > $RESULTS/coredumpctl.txt 2>/dev/null || true
agent_log
collect_cores {cores_to_host}
"""


@dataclass
class Storm:
    """The storm's shape: crash requests per_s a second for crash_s
    seconds; wrk for base_s alone, then for drive_s from a second before
    the first crash request; Apache's opcache segment of opcache_mb MiB,
    warm_mb MiB of it filled (what makes the workers' cores big)."""
    per_s: int = 2
    crash_s: int = 10
    base_s: int = 5
    drive_s: int = 30
    limit_s: int = 600
    cores_to_host: int = 10
    opcache_mb: int = OPCACHE_MB
    warm_mb: int = WARM_MB

    def disk_mb(self):
        """A scratch disk with room for every crash's core above the
        agent's 1 GiB free-space floor (a core is the opcache segment and
        about 24 MiB besides: 40 MiB with 16 MiB of opcache), 4 GiB at
        least: the setups compare what they keep, not a full disk; 16 GiB
        at most (the storm of the real rate, 600 crashes, would ask for
        96: there the free-space floor and systemd-coredump's MaxUse
        decide, as on any disk)."""
        return min(16384, max(4096, 1024 + 64 + self.per_s * self.crash_s * (self.opcache_mb + 32)))


def job(setup, storm):
    """The guest's shell for setup and storm."""
    return JOB.format(setup=setup.script.strip(), workers=WORKERS, opcache_mb=storm.opcache_mb,
                      warm_mb=storm.warm_mb, base_s=storm.base_s, drive_s=storm.drive_s,
                      per_s=storm.per_s, crash_s=storm.crash_s, limit_s=storm.limit_s,
                      cores_to_host=storm.cores_to_host)


def run(setup, storm, timeout=1800):
    """Boot the setup's kernel in the Debian guest, run the storm; the
    job's Result."""
    res = qemu_boot(job(setup, storm), kernel=setup.kernel, rootfs=ROOTFS, mem="3G", timeout=timeout,
                    results_mb=1024, disk_mb=storm.disk_mb(), name=f"apache-bench-{setup.name}")
    if res.rc != 0:
        raise RuntimeError(f"Apache storm job of {setup.name} failed (rc {res.rc}):\n"
                           f"{res.output[-4000:]}")
    return res


# --- what it did --------------------------------------------------------------

def _text(res, name):
    return res.text(name) if res.path(name).exists() else ""


def skipped(res, crashes):
    """(kept by the setup's own count, {cause: dumps skipped or lost},
    uncharged or None): coredam-pipe's counters, the kernel's, or, for
    systemd-coredump, the kernel's log of dumps over core_pipe_limit and
    what `coredumpctl list` lacks or lists without a core."""
    # the kernel's first: on the patched kernel they count every dump,
    # whatever the agent left in /run
    for name in ("kstats", "pipe-stats"):
        text = _text(res, name)
        if text.strip():
            s = name_values(text)
            causes = {k[len("skipped_"):]: v for k, v in s.items() if k.startswith("skipped_") and v}
            if s.get("failed"):
                causes["failed"] = s["failed"]
            return s["completed"], causes, s["uncharged"]
    listed = [line for line in _text(res, "coredumpctl.txt").splitlines() if "apache2" in line]
    if not listed and "systemd-coredump" not in _text(res, "core_pattern"):
        return 0, {}, None
    present = sum(1 for line in listed if " present " in f" {line} ")
    over = len(re.findall(r"over core_pipe_limit", _text(res, "dmesg.txt")))
    causes = {"pipe_limit": over, "not stored": len(listed) - present,
              "lost": crashes - len(listed) - over}
    return present, {k: v for k, v in causes.items() if v}, None


def figures(res, workers=WORKERS, tmp=None):
    """One setup's numbers, by name (JSON-ready), from its results; with
    a directory @tmp to work in, each whole core brought back also read by
    gdb (check_backtrace())."""
    log = _text(res, "error.log")
    crashed = crashed_pids(log)
    starts = crash_starts(log)
    rows = crash_rows(_text(res, "crash.txt"))
    sent = [r[0] for r in rows]
    # the first crash request: where the storm's windows begin
    first = min(sent) if sent else None
    ends = [r[1] for r in rows if r[1] is not None and r[3] == 0 and r[2]]
    f = {"sent": len(rows),
         "send_rate": (len(sent) - 1) / ((max(sent) - min(sent)) / 1000)
         if len(sent) > 1 and max(sent) > min(sent) else None,
         "answered": sum(1 for r in rows if r[3] > 0),
         "unended": sum(1 for r in rows if r[1] is None),
         "crashes": len(crashed), "other_deaths": other_deaths(log)}
    begun = sorted(ms for _, ms in starts.values())
    f["crash_rate"] = (len(begun) - 1) / ((begun[-1] - begun[0]) / 1000) \
        if len(begun) > 1 and begun[-1] > begun[0] else None
    f["crash_span_s"] = (begun[-1] - begun[0]) / 1000 if begun else None
    # each crash from its start in the worker to its connection's end (the
    # worker gone: its dump over); matched by the client's port
    gone = [r[1] - starts[r[2]][1] for r in rows
            if r[2] in starts and r[1] is not None and r[3] == 0]
    f["gone_p50_s"] = pct(gone, 50) / 1000 if gone else None
    f["gone_max_s"] = max(gone) / 1000 if gone else None
    # each crashed worker's replacement: Apache never has more than its
    # workers (ServerLimit) and keeps every one (no spare to stop, no
    # recycling), so every new worker replaces one gone; the k-th to go
    # (its connection closed) is paired with the k-th new pid to show
    by_gone = sorted((r[1], starts[r[2]][1]) for r in rows
                     if r[2] in starts and r[1] is not None and r[3] == 0)
    born = new_pids(_text(res, "pids.txt"), starts.values())
    replaced = [b - s for (_, s), (b, _) in zip(by_gone, born)]
    f["replaced"] = len(replaced)
    f["replaced_p50_s"] = pct(replaced, 50) / 1000 if replaced else None
    f["replaced_max_s"] = max(replaced) / 1000 if replaced else None
    # back to every worker: the first scoreboard after the last crashed
    # worker is gone with every slot live, from the last crash's start
    last_start = begun[-1] if begun else None
    last_gone = max(ends) if ends else None
    f["full_after_s"] = None
    if last_start is not None and last_gone is not None:
        back = [ms for ms, _, _, sb, _ in scoreboard(_text(res, "scoreboard.txt"))
                if ms >= last_gone and full(sb, workers)]
        if back:
            f["full_after_s"] = (back[0] - last_start) / 1000
        f["last_gone_s"] = (last_gone - last_start) / 1000
    # the longest a new connection to Apache went unanswered: between two
    # answers of mod_status (asked on a connection of its own, 0.5 s after
    # each answer or failure), from the last answer before the first crash
    # request; an upper bound within the busy guest's sampling
    answers = [ms for ms, _, _, sb, _ in scoreboard(_text(res, "scoreboard.txt")) if sb != "-"]
    if answers and sent:
        since = [ms for ms in answers if ms <= first][-1:] + [ms for ms in answers if ms > first]
        gaps = [b - a for a, b in zip(since, since[1:])]
        f["unanswered_max_s"] = max(gaps) / 1000 if gaps else None
    # MemAvailable: the lowest from the first crash request to the last
    # crashed worker gone (or the last sample), and the last before it
    mem = meminfo(_text(res, "meminfo.txt"))
    if mem and sent:
        t0, t1 = first, last_gone or mem[-1][0]
        during = [kb for ms, kb in mem if t0 <= ms <= t1]
        before = [kb for ms, kb in mem if ms < t0]
        f["mem_min_mb"] = min(during) / 1024 if during else None
        f["mem_before_mb"] = before[-1] / 1024 if before else None
    for phase, name in (("base", "baseline.json"), ("storm", "storm.json")):
        text = _text(res, name).strip()
        if text:
            w = json.loads(text)
            f[f"{phase}_requests"] = w["requests"]
            f[f"{phase}_errors"] = wrk_errors(w)
            for k in ("p50", "p99", "max"):
                f[f"{phase}_{k}_ms"] = w[f"{k}_us"] / 1000
            f[f"{phase}_s"] = w["duration_us"] / 1e6
    # the healthy route as a new client saw it, one request at a time, from
    # the first crash request: [(s since it, latency ms or None, answered)]
    # for the plot, and the longest wait
    if sent:
        series = [((ms - first) / 1000, lat, ok)
                  for ms, lat, ok in healthy_samples(_text(res, "healthy.txt"))]
        f["healthy_series"] = series
        # those that ended after the first crash request
        after = [(lat, ok) for t, lat, ok in series if lat is not None and t * 1000 + lat >= 0]
        f["healthy_max_s"] = max(lat for lat, _ in after) / 1000 if after else None
        f["healthy_failed"] = sum(1 for _, ok in after if not ok)
    kept, causes, uncharged = skipped(res, len(crashed))
    f["kept_counted"], f["skipped"], f["uncharged"] = kept, causes, uncharged
    # the cores on disk, and those brought back, checked on the host
    listed = [line.split() for line in _text(res, "cores.txt").splitlines() if line.strip()]
    f["core_files"] = sum(1 for w in listed if not w[0].endswith(".incomplete"))
    f["incomplete"] = sum(1 for w in listed if w[0].endswith(".incomplete"))
    f["core_mb"] = sum(int(w[1]) for w in listed) / 2**20
    checks = [json.loads(line) for line in _text(res, "cores.json").splitlines()
              if line.startswith("{")]
    f["guest_checked"] = len(checks)
    f["guest_whole"] = sum(1 for c in checks if c.get("valid") and c.get("complete"))
    host = sorted(p for p in res.path("cores").glob("*")) if res.path("cores").is_dir() else []
    verdicts, bts = [], []
    for p in host:
        # one core in memory at a time, decompressed once
        data = read_core(p)
        verdicts.append(check_core(data))
        # ... and a whole one read by gdb as a user would
        if tmp and verdicts[-1][0]:
            bts.append(check_backtrace(data, tmp)[:2])
    f["host_checked"] = len(verdicts)
    f["host_whole"] = sum(1 for ok, _ in verdicts if ok)
    f["host_why"] = sorted({why for ok, why in verdicts if not ok})
    f["host_bt"] = sum(1 for ok, _ in bts if ok)
    f["host_bt_why"] = sorted({why for ok, why in bts if not ok})
    return f


def plot(figs, path, storm):
    """The healthy route's latency over time as a new client saw it
    (healthy-watch.php), one line per setup, log scale, from the first
    crash request; the crash requests' span shaded, each answer that was
    not "ok" marked x."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5))
    ax.axvspan(0, storm.crash_s, color="grey", alpha=0.15, label="crash requests sent")
    for name, f in figs:
        series = [(t, lat) for t, lat, _ in f.get("healthy_series", []) if lat is not None]
        if not series:
            continue
        # each at the time its answer came: a stall is a point as high as
        # it was long, where it ended
        line, = ax.plot([t + lat / 1000 for t, lat in series], [max(lat, 1) for _, lat in series],
                        linewidth=0.8, marker=".", markersize=2, label=name)
        bad = [(t + lat / 1000, max(lat, 1)) for t, lat, ok in f["healthy_series"]
               if lat is not None and not ok]
        if bad:
            ax.plot(*zip(*bad), linestyle="none", marker="x", color=line.get_color())
    ax.set_yscale("log")
    ax.set_xlabel("seconds since the first crash request (each point when its answer came)")
    ax.set_ylabel("GET /healthy.php on a new connection (ms)")
    ax.set_title(f"Apache prefork + mod_php, {storm.per_s} crash requests/s for "
                 f"{storm.crash_s} s, {storm.opcache_mb} MiB opcache")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _ms(v):
    return "-" if v is None else f"{v:.0f}"


def _s(v):
    return "-" if v is None else f"{v:.1f} s"


def tables(figs):
    """The report's two tables from [(setup, figures)]: the storm and the
    healthy route; the cores and Apache's recovery."""
    load = []
    for name, f in figs:
        rate = "-" if f["crash_rate"] is None else f"{f['crash_rate']:.2f}/s"
        sent_rate = "-" if f["send_rate"] is None else f"{f['send_rate']:.2f}/s"
        load.append((name, f"{f['sent']} ({sent_rate})", f"{f['crashes']}", rate,
                     f"{_ms(f.get('base_p50_ms'))} / {_ms(f.get('base_p99_ms'))} / "
                     f"{_ms(f.get('base_max_ms'))} ms",
                     f"{_ms(f.get('storm_p50_ms'))} / {_ms(f.get('storm_p99_ms'))} / "
                     f"{_ms(f.get('storm_max_ms'))} ms",
                     f"{f.get('base_requests', '-')} / {f.get('storm_requests', '-')}",
                     f"{f.get('base_errors', '-')} / {f.get('storm_errors', '-')}",
                     "-" if f.get("healthy_max_s") is None else
                     f"{f['healthy_max_s']:.1f} s, {f['healthy_failed']}"))
    cores = []
    for name, f in figs:
        causes = ", ".join(f"{k} {v}" for k, v in sorted(f["skipped"].items())) or "-"
        host = f"{f['host_whole']}/{f['host_checked']}" if f["host_checked"] else "-"
        bt = f"{f['host_bt']}/{f['host_whole']}" if f.get("host_whole") and "host_bt" in f else "-"
        mem = "-" if f.get("mem_min_mb") is None else \
            f"{f['mem_min_mb']:.0f} MiB (of {f['mem_before_mb']:.0f})" \
            if f.get("mem_before_mb") is not None else f"{f['mem_min_mb']:.0f} MiB"
        gone = "-" if f["gone_p50_s"] is None else \
            f"{f['gone_p50_s']:.1f} / {f['gone_max_s']:.1f} s"
        replaced = "-" if f.get("replaced_p50_s") is None else \
            f"{f['replaced_p50_s']:.1f} / {f['replaced_max_s']:.1f} s"
        cores.append((name, f"{f['core_files']}", host, bt, causes,
                      "-" if f["uncharged"] is None else f"{f['uncharged']}",
                      mem, gone, replaced, _s(f["full_after_s"]), _s(f.get("unanswered_max_s"))))
    return (markdown(("setup", "crash requests sent (rate)", "crashes in Apache's log",
                      "crash rate reached", "healthy p50 / p99 / max, alone",
                      "healthy p50 / p99 / max, storm", "requests alone / storm",
                      "errors alone / storm", "one at a time: longest wait, not ok"), load),
            markdown(("setup", "cores kept", "whole on the host", "gdb: PHP's recursion",
                      "skipped or lost, by cause",
                      "uncharged", "MemAvailable lowest", "crash to worker gone p50 / max",
                      "crash to replaced p50 / max", "all workers back after the last crash",
                      "Apache unanswered, longest"),
                     cores))
