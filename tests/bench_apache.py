#!/usr/bin/env python3
"""The Apache crash storm as a benchmark: a prefork Apache with mod_php 8.2
and its opcache in the Debian guest (systemd), whose workers die by
SIGSEGV while wrk drives its healthy route, under each setup in a boot of
its own, side by side in one command (tests/harness/apache.py has the
setups, the job, the figures and the tables):

    make bench-apache   (BENCH_SETUPS: some of the setups, comma separated;
                         APACHE_CRASH_PER_S, APACHE_CRASH_S: the crash
                         requests' rate and how long they are sent, 2 and 10;
                         APACHE_OPCACHE_MB, APACHE_WARM_MB: the opcache
                         segment and how much of it is filled, 16 and 4:
                         128 and 32 give cores of about 150 MiB)

Setups: no-dumps (the floor), systemd-coredump (Debian 12's, as it comes),
coredam-pipe (stock kernel, coredamd's shipped defaults), coredam-socket
(stock 7.3, coredamd serving the coredump socket with its shipped
defaults), coredam-socket-streamed (the same without its read-ahead),
coredam-fixed and coredam-adaptive (the patched kernel).

Prints the tables; writes build/bench-apache/report.md, results.json and
latency.png (the healthy route over time, with matplotlib).
One run of each setup: the crashes of a storm cost minutes under TCG.
"""

import datetime
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.apache import OPCACHE_MB, SETUPS, WARM_MB, WORKERS, Storm, figures, plot, run, tables  # noqa: E402
from harness.console import GuestError  # noqa: E402
from harness.kernels import kernel_id  # noqa: E402
from harness.paths import BUILD  # noqa: E402


def pick_setups():
    """The setups BENCH_SETUPS names (every one without it); exits on a
    name it does not know."""
    names = [s.name for s in SETUPS]
    want = os.environ.get("BENCH_SETUPS")
    if want and set(want.split(",")) - set(names):
        sys.exit(f"BENCH_SETUPS: unknown {', '.join(sorted(set(want.split(',')) - set(names)))}; "
                 f"known: {', '.join(names)}")
    return [s for s in SETUPS if not want or s.name in want.split(",")]


def storm_from_env():
    """The storm APACHE_* describe; exits on a shape that cannot be run."""
    storm = Storm(per_s=int(os.environ.get("APACHE_CRASH_PER_S", 2)),
                  crash_s=int(os.environ.get("APACHE_CRASH_S", 10)),
                  opcache_mb=int(os.environ.get("APACHE_OPCACHE_MB", OPCACHE_MB)),
                  warm_mb=int(os.environ.get("APACHE_WARM_MB", WARM_MB)))
    if not 0 < storm.warm_mb < storm.opcache_mb:
        sys.exit(f"APACHE_WARM_MB ({storm.warm_mb}) must be more than 0 and less than "
                 f"APACHE_OPCACHE_MB ({storm.opcache_mb})")
    storm.drive_s = storm.crash_s + 20
    return storm


def bench(chosen, storm, command):
    """Run the storm under each of the chosen setups; write
    build/bench-apache/results.json, report.md and latency.png (with
    matplotlib); (the report's text, whether a setup failed). @command
    is how the report says it was run."""
    out = BUILD / "bench-apache"
    out.mkdir(parents=True, exist_ok=True)
    # an earlier run's plot is not this one's
    (out / "latency.png").unlink(missing_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    kernels = "; ".join(f"{k} {kernel_id(k)}" for k in dict.fromkeys(s.kernel for s in chosen))
    figs, wall, failed = [], {}, {}
    for s in chosen:
        print(f"apache storm / {s.name} ...", flush=True)
        t0 = time.monotonic()
        try:
            res = run(s, storm)
        except (RuntimeError, GuestError) as e:
            # the other setups' boots are still worth their time
            wall[s.name] = time.monotonic() - t0
            # the report names no path of this machine: the first line, its
            # "(console log: ...)" left out
            failed[s.name] = str(e).splitlines()[0].split(" (console log:")[0]
            print(f"    FAILED: {e}"[:4000], flush=True)
            continue
        wall[s.name] = time.monotonic() - t0
        with tempfile.TemporaryDirectory() as tmp:
            f = figures(res, tmp=Path(tmp))
        figs.append((s.name, f))
        print(f"    {f['sent']} crash requests, {f['crashes']} crashes, healthy p99 "
              f"{f.get('base_p99_ms', 0):.0f} -> {f.get('storm_p99_ms', 0):.0f} ms, "
              f"{f['storm_errors'] if 'storm_errors' in f else '-'} errors, "
              f"{f['core_files']} cores; {wall[s.name]:.0f} s (logs: {res.log_dir})", flush=True)
        # after each setup: a run of half an hour is not to be lost to the next boot
        (out / "results.json").write_text(json.dumps(dict(figs), indent=1))
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                         text=True, cwd=Path(__file__).resolve().parent).stdout.strip()
    elapsed = (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()
    plotted = False
    if figs and importlib.util.find_spec("matplotlib") is not None:
        plot(figs, out / "latency.png", storm)
        plotted = True
    load, cores = tables(figs)
    md = [f"# coredam Apache storm benchmark, {started:%Y-%m-%d %H:%M} UTC", "",
          f"Command: `{command}`; revision {rev}; "
          f"{elapsed / 60:.0f} min. One run of each setup, each its own boot.",
          f"Kernels: {kernels}.", "",
          f"Apache 2.4 prefork with exactly {WORKERS} workers, mod_php 8.2 with a "
          f"{storm.opcache_mb} MiB opcache ({storm.warm_mb} MiB of it filled), in the Debian "
          f"12 guest (systemd; QEMU TCG, 3 GiB, cores to ext4 on a virtio disk of "
          f"{storm.disk_mb()} MiB throttled to 40 MB/s). "
          f"wrk (1 thread, 2 connections) drives /healthy.php for {storm.base_s} s alone, then "
          f"for {storm.drive_s} s while /crash.php is requested {storm.per_s} times a second "
          f"for {storm.crash_s} s, from a second after wrk starts (an open loop, each request "
          f"on a connection of its own; every one kills its worker by SIGSEGV).", "",
          "## Setups", ""]
    md += [f"- `{s.name}`: {s.describe}" for s in chosen]
    md += ["", "## The storm and the healthy route", "",
           "'crash requests sent (rate)': as the client sent them, the rate from the first "
           "to the last; 'crash rate reached': crashes over the time from the first worker "
           "to take a crash request to the last (crash.php's log line); latency and "
           "requests from wrk, alone and through the storm; errors: wrk's connect, read, "
           "write, timeout (10 s) and non-2xx/3xx answers.", "", load,
           "", "## The cores and Apache's recovery", "",
           "'cores kept': core files the setup left on disk (not .incomplete); 'whole on "
           f"the host': of the cores brought back (at most {storm.cores_to_host}), how many harness.elfcore "
           "reads as a whole ELF core of an apache2 worker killed by SIGSEGV; 'skipped or "
           "lost': the setup's own counters (coredam-pipe's, the kernel's), or for "
           "systemd-coredump the kernel's 'over core_pipe_limit' lines, crashes "
           "`coredumpctl list` lists without a core, and crashes it does not list; "
           "'MemAvailable lowest': from the first crash request until the last crashed "
           "worker was gone (the last sample before, in brackets); 'crash to worker gone': "
           "from a worker taking its crash request until its connection closed (its dump "
           "over, the process gone); 'crash to replaced': until the new worker that took "
           "its place first showed (the guest lists Apache's pids every 0.5 s, and crash.php "
           "logs the worker that took a crash request: the earlier of the two, an upper "
           "bound where the busy guest's samples are seconds apart; the k-th "
           "worker to go is paired with the k-th new pid: Apache never runs more than its "
           "workers, and stops none); 'all workers back': from the last crash's start until "
           "mod_status first showed every slot with a live worker after the last crashed "
           "one was gone; 'Apache unanswered, longest': the widest gap between two answers of "
           "mod_status (asked on a new connection 0.5 s after each answer or failure) from the "
           "last answer before the first crash request: how long a new client waited at worst, "
           "to within the guest's sampling. wrk's latencies count only the requests answered "
           "before it stopped: one still waiting then counts nowhere, so a server that stopped "
           "answering shows in the requests and in this column, not in the p99.", "", cores,
           ""]
    if plotted:
        md += ["## The healthy route over time", "",
               "GET /healthy.php on a new connection, one at a time every 250 ms (the next "
               "at once when one took longer), each point when its answer came, its height "
               "how long it took: what a new client of the server saw. The table's column "
               "'one at a time' is its longest wait from the first crash request, and how "
               "many answers were not a 200 with the route's body.", "",
               "![healthy route latency](latency.png)", ""]
    if failed:
        md += ["## Setups that failed", ""] + [f"- `{k}`: {v}" for k, v in failed.items()] + [""]
    md += ["## Run times", ""]
    md += [f"- {k}: {v:.0f} s (boot to results)" for k, v in wall.items()]
    text = "\n".join(md) + "\n"
    (out / "report.md").write_text(text)
    return text, bool(failed)


def command(target="make bench-apache", also=()):
    """The command line that ran this, as the report quotes it: @target
    after the variables that shape the storm and those named in @also."""
    env = " ".join(f"{k}={os.environ[k]}" for k in ("BENCH_SETUPS", *also, "APACHE_CRASH_PER_S",
                                                    "APACHE_CRASH_S", "APACHE_OPCACHE_MB",
                                                    "APACHE_WARM_MB") if k in os.environ)
    return f"{env + ' ' if env else ''}{target}"


def main():
    text, failed = bench(pick_setups(), storm_from_env(), command())
    print()
    print(text)
    print(f"report: {BUILD / 'bench-apache' / 'report.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
