"""Every program's exit codes, as the man pages promise them, on fake roots.

One table: a program, its arguments, the fake root it runs on, the exit
code its EXIT STATUS section gives, and a fragment of what it prints.
The programs are built from this tree into a temporary directory and run
against a fake /proc, /sys, cgroup2 mount, state directory and
configuration under tmp_path (--proc-root, --sys-root, --cgroup-root,
--state-dir, --config): no root, no kernel of the series, no VM.

Host only and standalone: it needs a C compiler and make, nothing from
the VM harness. Left out, because the program would write to the machine's
kernel log (/dev/kmsg) when run as root: coredam-pipe's own dump path
(exit codes 3, 4 and 6, and 2 for bad positional arguments), which the VM
tests cover.
"""

import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple

import pytest

from harness.promtool import check_metrics

TOP = Path(__file__).resolve().parents[2]
USERSPACE = TOP / "userspace"
DATA = Path(__file__).resolve().parent / "test_data"

# every counter of kernel.core_dump_stats, as userspace/lib/sysctl.c reads it
STAT_NAMES = ("started admitted completed failed skipped_full skipped_timeout skipped_killed "
              "skipped_pipe_limit active waiting overtime leases_ended uncharged failed_open "
              "failed_setup failed_limit failed_killed failed_write failed_io bytes").split()
# the knobs the series adds; a stock kernel has none of them
SERIES_KNOBS = {
    "core_cgroup": "/coredump.slice",
    "core_max_concurrency": "2",
    "core_max_waiting": "64",
    "core_wait_timeout_ms": "0",
    "core_writeback_window": "1024",
    "core_dump_stats": "".join(f"{n} 0\n" for n in STAT_NAMES),
}


@pytest.fixture(scope="module")
def bins(tmp_path_factory):
    """The three programs, built from this tree with `make -C userspace O=DIR`."""
    cc = (os.environ.get("CC") or "cc").split()[0]
    for tool in (cc, "make"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not found: the programs cannot be built")
    out = tmp_path_factory.mktemp("build")
    r = subprocess.run(["make", "-C", str(USERSPACE), f"O={out}", f"-j{os.cpu_count() or 2}", "all"],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"build failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
    return out


def mountinfo_path(p: Path) -> str:
    """@p as /proc/self/mountinfo writes a mount point: space, tab, newline, backslash as \\ooo."""
    return "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in str(p))


class FakeAgent:
    """A control socket that answers each request by its first word, as coredamd would."""

    def __init__(self, path: Path, answers: Dict[str, str]):
        self.answers = answers
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.stopping = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            with conn:
                conn.settimeout(2)
                req = b""
                while not req.endswith(b"\n"):
                    chunk = conn.recv(256)
                    if not chunk:
                        break
                    req += chunk
                word = req.decode(errors="replace").split(" ", 1)[0].strip()
                conn.sendall(self.answers.get(word, "ERR unknown request\n").encode())

    def stop(self):
        self.stopping = True
        self.thread.join(2)
        self.sock.close()


class FakeRoot:
    """A machine under tmp_path: by default one the series is fully set up for.

    proc/    sys/kernel with the series' knobs, self/mountinfo (cgroup2 at
             cgroup/, an ext4 on 8:1 at cores/), pressure/io
    sys/     dev/block/8:1, a partition of sda (8:0)
    cgroup/  io and memory available and delegated, coredump.slice with
             its files
    run/     the state directory; the control socket is run/control.sock
    etc/     coredam.conf pointing every path into the above
    """

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.proc, self.sys, self.cgroup = tmp / "proc", tmp / "sys", tmp / "cgroup"
        self.state, self.cores, self.etc = tmp / "run", tmp / "cores", tmp / "etc"
        self.conf, self.confd = self.etc / "coredam.conf", self.etc / "coredam.conf.d"
        self.socket = self.state / "control.sock"
        self.agent: Optional[FakeAgent] = None
        self.stdin = b""
        self.mounts = {"cgroup": f"30 1 0:27 / {mountinfo_path(self.cgroup)} rw - cgroup2 cgroup2 rw",
                       "cores": f"40 1 8:1 / {mountinfo_path(self.cores)} rw - ext4 /dev/sda1 rw"}
        for d in (self.state, self.cores, self.confd):
            d.mkdir(parents=True)
        self.kernel(patched=True)
        self.write("proc/sys/kernel/core_pattern", "core\n")
        self.write("proc/sys/kernel/core_pipe_limit", "0\n")
        self.write("proc/pressure/io", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                   "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        self.write_mountinfo()
        self.block_device()
        self.write("cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
        self.write("cgroup/cgroup.subtree_control", "io memory\n")
        self.write("cgroup/cgroup.procs", "")
        for f, text in (("io.max", ""), ("memory.high", "max\n"), ("cgroup.procs", ""),
                        ("cgroup.events", "populated 0\nfrozen 0\n"), ("cgroup.controllers", "io memory\n"),
                        ("cgroup.subtree_control", "")):
            self.write(f"cgroup/coredump.slice/{f}", text)
        self.config_lines = [
            "[Agent]", f"ControlSocket={self.socket}", f"MetricsFile={self.state}/metrics.prom",
            "[Cgroup]", "KernelLeaf=none",
            "[Devices]", f"Destination={self.cores}",
            "[Space]", "FreeSpaceFloor=1M",
            "[Pipe]", f"Program={self.tmp}/coredam-pipe", f"Directory={self.cores}",
        ]
        self.write_config()

    # small verbs the table's setups are made of

    def write(self, rel: str, text: str):
        p = self.tmp / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    def kernel(self, patched: bool):
        for knob, value in SERIES_KNOBS.items():
            p = self.proc / "sys/kernel" / knob
            if patched:
                self.write(f"proc/sys/kernel/{knob}", value if value.endswith("\n") else value + "\n")
            elif p.exists():
                p.unlink()

    def write_mountinfo(self):
        self.write("proc/self/mountinfo", "".join(line + "\n" for line in self.mounts.values()))

    def block_device(self):
        disk = "devices/pci0000:00/0000:00:04.0/virtio1/block/sda"
        self.write(f"sys/{disk}/dev", "8:0\n")
        self.write(f"sys/{disk}/sda1/dev", "8:1\n")
        self.write(f"sys/{disk}/sda1/partition", "1\n")
        (self.sys / "dev/block").mkdir(parents=True)
        os.symlink(f"../../{disk}", self.sys / "dev/block/8:0")
        os.symlink(f"../../{disk}/sda1", self.sys / "dev/block/8:1")

    def configure(self, *lines: str):
        """Add lines to the end of coredam.conf (each "[Section]" or "Key=value")."""
        self.config_lines += lines
        self.write_config()

    def write_config(self):
        self.conf.write_text("".join(line + "\n" for line in self.config_lines))

    def serve(self, **answers: str):
        self.agent = FakeAgent(self.socket, answers)

    def close(self):
        if self.agent:
            self.agent.stop()


# The setups: each takes the healthy FakeRoot and breaks or changes one thing.

def healthy(r: FakeRoot):
    pass


def stock_kernel(r: FakeRoot):
    r.kernel(patched=False)


def stock_kernel_required(r: FakeRoot):
    r.kernel(patched=False)
    r.configure("[Agent]", "RequireKernelSupport=yes")


def stock_kernel_pipe_helper_missing(r: FakeRoot):
    r.kernel(patched=False)
    r.configure("[Pipe]", "SetCorePattern=yes")


def stock_kernel_without_socket(r: FakeRoot):
    r.kernel(patched=False)
    r.configure("[Socket]", "SetCorePattern=yes", f"Listen={r.tmp}/sock/socket")


def served_on_the_socket(r: FakeRoot):
    # a 7.3 kernel: no series, the agent serves core_pattern @@ and counts
    # in the pipe helper's file (as a guest's pipe-stats recorded it)
    stock_kernel(r)
    r.write("proc/sys/kernel/core_pattern", "@@/run/coredam/coredump.socket\n")
    (r.state / "pipe").mkdir(mode=0o755)
    r.write("run/pipe/stats", (DATA / "pipe-stats").read_text())
    r.serve(STATUS=OK_STATUS)


def socket_kernel(r: FakeRoot):
    # a 7.3 kernel: no series, core_modes as CONFIG_UNIX makes it
    stock_kernel(r)
    r.write("proc/sys/kernel/core_modes", "file\npipe\nsocket\n")


def socket_path_in_force(r: FakeRoot):
    socket_kernel(r)
    r.configure("[Socket]", "SetCorePattern=yes", f"Listen={r.tmp}/sock/socket")
    r.write("proc/sys/kernel/core_pattern", f"@@{r.tmp}/sock/socket\n")


def socket_path_no_destination(r: FakeRoot):
    # where the cores go is then the socket writer's [Pipe] Directory=
    r.config_lines.remove(f"Destination={r.cores}")
    socket_path_in_force(r)


def socket_path_not_yet(r: FakeRoot):
    socket_kernel(r)
    r.configure("[Socket]", "SetCorePattern=yes", f"Listen={r.tmp}/sock/socket")


def socket_bound(r: FakeRoot):
    # coredamd listening, as ExecStartPost= finds it after READY=1
    socket_path_not_yet(r)
    (r.tmp / "sock").mkdir(mode=0o700)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(r.tmp / "sock/socket"))
    s.close()


def another_socket_server(r: FakeRoot):
    socket_kernel(r)
    r.write("proc/sys/kernel/core_pattern", "@@/run/systemd/coredump\n")


def pipe_path_in_force(r: FakeRoot):
    # the helper as the kernel runs it: root's, writable by root alone
    socket_kernel(r)
    helper = r.tmp / "coredam-pipe"
    helper.write_text("#!/bin/sh\n")
    helper.chmod(0o755)
    r.write("proc/sys/kernel/core_pattern", f"|{helper} %P %u %g %s %t %e\n")


def another_pipe_helper(r: FakeRoot):
    stock_kernel(r)
    r.write("proc/sys/kernel/core_pattern", "|/bin/true %P\n")


def no_proc_sys_kernel(r: FakeRoot):
    shutil.rmtree(r.proc / "sys/kernel")


def no_cgroupfs(r: FakeRoot):
    del r.mounts["cgroup"]
    r.write_mountinfo()
    shutil.rmtree(r.cgroup)


def cgroup_v1_only(r: FakeRoot):
    del r.mounts["cgroup"]
    r.mounts["v1"] = "25 1 0:22 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory"
    r.write_mountinfo()


def no_io_controller(r: FakeRoot):
    r.write("cgroup/cgroup.controllers", "cpuset cpu memory pids\n")
    r.write("cgroup/cgroup.subtree_control", "memory\n")


def state_dir_is_a_file(r: FakeRoot):
    r.state.rmdir()
    r.state.write_text("not a directory\n")


def socket_is_a_file(r: FakeRoot):
    r.socket.write_text("not a socket\n")


def adaptive_mode(r: FakeRoot):
    r.configure("[Agent]", "Mode=adaptive")


def bad_value(r: FakeRoot):
    r.configure("[Limits]", "Concurrency=lots")


def unknown_key(r: FakeRoot):
    r.configure("[Limits]", "Concurency=2")


def bad_dropin(r: FakeRoot):
    (r.confd / "10-site.conf").write_text("[Limits]\nWriteBandwidth=fast\n")


def config_missing(r: FakeRoot):
    r.conf.unlink()


def config_is_a_directory(r: FakeRoot):
    r.conf.unlink()
    r.conf.mkdir()


def agent_answers(**answers: str) -> Callable[[FakeRoot], None]:
    def setup(r: FakeRoot):
        r.serve(**answers)
    setup.__name__ = "agent_answers"
    return setup


def world_writable_dir(r: FakeRoot):
    d = r.tmp / "open"
    d.mkdir()
    d.chmod(0o777)


KEPT_META = ('{"core":"core.crasher.42.100","pid":42,"uid":1000,"gid":1000,"signal":11,"time":100,'
             '"comm":"crasher","size":7,"disk_size":7,"compression":"none","truncated":false}\n')


def kept_core(r: FakeRoot):
    """One core coredam-pipe kept, with its metadata."""
    r.write("cores/core.crasher.42.100", "a core\n")
    r.write("cores/core.crasher.42.100.json", KEPT_META)


def kept_cores_over_max_use(r: FakeRoot):
    """Three kept cores, [Space] MaxUse= far below them: the two oldest go, the newest stays."""
    for pid, t in ((41, 50), (42, 100), (43, 150)):
        name = f"core.crasher.{pid}.{t}"
        r.write(f"cores/{name}", "a core\n")
        r.write(f"cores/{name}.json", KEPT_META.replace("core.crasher.42.100", name)
                .replace('"pid":42', f'"pid":{pid}').replace('"time":100', f'"time":{t}'))
    r.configure("[Space]", "MaxUse=1")


def keep_free_below_floor(r: FakeRoot):
    r.configure("[Space]", "KeepFree=512K")


def cores_dir_of_another_user(r: FakeRoot):
    """A destination its user does not own: root's (/) for a user, another uid's for root."""
    if os.geteuid() == 0:
        d = r.tmp / "theirs"
        d.mkdir()
        os.chown(d, 1234, 1234)
        r.configure("[Pipe]", f"Directory={d}")
    else:
        r.configure("[Pipe]", "Directory=/")


def cores_dir_is_a_file(r: FakeRoot):
    r.write("plainfile", "")
    r.configure("[Pipe]", f"Directory={r.tmp}/plainfile")


def zstd_stdin(r: FakeRoot):
    r.stdin = zstd_frame(b"a core\n")


def garbage_stdin(r: FakeRoot):
    r.stdin = b"this is not zstd\n"


def zstd_frame(data: bytes) -> bytes:
    """One zstd frame holding @data as a single raw block (RFC 8878 3.1.1)."""
    assert len(data) < 256
    # magic; descriptor: single segment, 1-byte content size; last raw block of len(data) bytes
    header = bytes([0x28, 0xB5, 0x2F, 0xFD, 0x20, len(data)])
    block = (1 | (0 << 1) | (len(data) << 3)).to_bytes(3, "little")
    return header + block + data


@dataclasses.dataclass(frozen=True)
class Row:
    program: str
    args: Tuple[str, ...]
    setup: Callable[[FakeRoot], None]
    code: int
    says: str           # in stdout or stderr; {state}, {cores}, ... name the fake root's paths
    roots: bool = True  # give the program the fake root's options (and config) before args


def row(program, args, setup, code, says, roots=True):
    return Row(program, tuple(args.split()) if isinstance(args, str) else tuple(args), setup, code, says, roots)


OK_STATUS = "OK\nmode=fixed\ncgroup=/coredump.slice\n"

TABLE = {
    # coredamd(8), EXIT STATUS: 0 clean shutdown (and --help, --version,
    # --check, --dump-config), 1 runtime failure, 2 usage, 3 bad
    # configuration, 4 RequireKernelSupport=yes on a kernel without
    # support, 5 cgroup setup, 6 sysctl or pipe helper, 7 state directory
    # or control socket
    "d-help": row("coredamd", "--help", healthy, 0, "Usage: coredamd"),
    "d-version": row("coredamd", "--version", healthy, 0, "coredamd "),
    "d-check": row("coredamd", "--check", healthy, 0, "self-check passed"),
    "d-check-stock": row("coredamd", "--check", stock_kernel, 0, "kernel support: incomplete"),
    "d-dump-config": row("coredamd", "--dump-config", healthy, 0, "ControlSocket={state}/control.sock"),
    "d-unknown-option": row("coredamd", "--bogus", healthy, 2, "unrecognized option"),
    "d-missing-argument": row("coredamd", "--check --config", healthy, 2, "requires an argument"),
    "d-unexpected-argument": row("coredamd", "--check extra", healthy, 2, 'unexpected argument "extra"'),
    "d-bad-pattern-mode": row("coredamd", "--core-pattern=sometimes", healthy, 2, "expected self, external"),
    "d-bad-value": row("coredamd", "--check", bad_value, 3, "coredam.conf:{last_line}: Concurrency=lots: "),
    "d-unknown-key": row("coredamd", "--check", unknown_key, 3, "coredam.conf:{last_line}: unknown key Concurency="),
    "d-bad-dropin": row("coredamd", "--dump-config", bad_dropin, 3, "10-site.conf:2: "),
    # coredam.conf(5): a missing file reads as empty, every key at its default
    "d-config-missing": row("coredamd", "--dump-config", config_missing, 0,
                            "ControlSocket=/run/coredam/control.sock"),
    "d-config-unreadable": row("coredamd", "--check", config_is_a_directory, 3, "coredam.conf: cannot read: Is a directory"),
    "d-no-kernel-support": row("coredamd", "--check", stock_kernel_required, 4, "RequireKernelSupport=yes"),
    "d-no-proc": row("coredamd", "--check", no_proc_sys_kernel, 1, "cannot read"),
    "d-check-no-cgroupfs": row("coredamd", "--check", no_cgroupfs, 5, "no cgroup file system is mounted"),
    "d-check-cgroup-v1": row("coredamd", "--check", cgroup_v1_only, 5, "cgroup v1 only"),
    "d-check-no-io": row("coredamd", "--check", no_io_controller, 5, "lacks the io controller"),
    "d-start-no-cgroupfs": row("coredamd", "", no_cgroupfs, 5, "cannot open cgroup root"),
    "d-start-no-io": row("coredamd", "", no_io_controller, 5, "cannot delegate io and memory"),
    "d-start-state-dir": row("coredamd", "", state_dir_is_a_file, 7, "cannot listen on {state}/control.sock"),
    "d-start-pipe-helper": row("coredamd", "", stock_kernel_pipe_helper_missing, 6,
                               "Program={tmp}/coredam-pipe refused"),
    # a kernel before 6.16 would read "@@/path" as a file name: refused before it is written
    "d-start-no-coredump-socket": row("coredamd", "", stock_kernel_without_socket, 4,
                                      "this kernel has no coredump socket"),
    "d-install-pipe-helper": row("coredamd", "--core-pattern=install", stock_kernel_pipe_helper_missing, 6,
                                 "kernel.core_pattern left as it was"),
    "d-install-not-asked": row("coredamd", "--core-pattern=install", stock_kernel, 0, "core_pattern left as it is"),
    # ExecStartPost=: the socket's core_pattern once the daemon listens
    "d-socket-not-asked": row("coredamd", "--core-pattern=socket", stock_kernel, 0, "core_pattern left as it is"),
    "d-socket-no-coredump-socket": row("coredamd", "--core-pattern=socket", stock_kernel_without_socket, 4,
                                       "this kernel has no coredump socket"),
    "d-socket-not-listening": row("coredamd", "--core-pattern=socket", socket_path_not_yet, 6,
                                  "Listen={tmp}/sock/socket is no socket of root's"),
    "d-socket-installs": row("coredamd", "--core-pattern=socket", socket_bound, 0,
                             'core_pattern set to the coredump socket event=socket core_pattern="@@{tmp}/sock/socket"'),
    "d-restore-nothing": row("coredamd", "--core-pattern=restore", stock_kernel, 0, ""),

    # coredamctl(1), EXIT STATUS: 0 success, 1 failure (doctor: a problem;
    # reload: refused), 2 usage or invalid value, 3 agent not running, 4
    # status, set, reload: only root may ask the agent
    "c-help": row("coredamctl", "--help", healthy, 0, "Usage: coredamctl"),
    "c-version": row("coredamctl", "--version", healthy, 0, "coredamctl "),
    "c-help-command": row("coredamctl", "help status", healthy, 0, "Exit codes: 0 the agent runs"),
    "c-command-help": row("coredamctl", "set --help", healthy, 0, "Usage: coredamctl [OPTIONS] set"),
    "c-no-command": row("coredamctl", "", healthy, 2, "no command given"),
    "c-unknown-command": row("coredamctl", "frobnicate", healthy, 2, 'unknown command "frobnicate"'),
    "c-unknown-option": row("coredamctl", "--bogus status", healthy, 2, "unrecognized option"),
    "c-missing-argument": row("coredamctl", "--socket", healthy, 2, "requires an argument"),
    "c-help-unknown": row("coredamctl", "help frobnicate", healthy, 2, 'unknown command "frobnicate"'),
    "c-status-bad-option": row("coredamctl", "status --bogus", healthy, 2, "Try 'coredamctl status --help'"),
    "c-status-extra": row("coredamctl", "status extra", healthy, 2, 'unexpected argument "extra"'),
    "c-doctor-extra": row("coredamctl", "doctor extra", healthy, 2, 'unexpected argument "extra"'),
    "c-set-no-value": row("coredamctl", "set bandwidth", healthy, 2, "expected NAME VALUE"),
    "c-set-unknown-name": row("coredamctl", "set speed 10M", healthy, 2, 'unknown setting "speed"'),
    "c-set-bad-value": row("coredamctl", "set concurrency lots", healthy, 2, "Concurrency=lots: expected"),
    "c-set-too-large": row("coredamctl", "set bandwidth 99999999999999999999", healthy, 2,
                           "WriteBandwidth=99999999999999999999: too large"),
    "c-watch-bad-interval": row("coredamctl", "watch --interval=10ms", healthy, 2, "at least 100ms"),
    "c-status-no-agent": row("coredamctl", "status", healthy, 3, "{state}/control.sock: No such file"),
    "c-status-not-a-socket": row("coredamctl", "status", socket_is_a_file, 3, "Connection refused"),
    "c-status-root-only": row("coredamctl", "status", agent_answers(STATUS="ERR permission denied\n"), 4,
                              "ERR permission denied"),
    "c-status": row("coredamctl", "status", agent_answers(STATUS=OK_STATUS), 0, "/coredump.slice"),
    "c-status-json": row("coredamctl", "status --json", agent_answers(STATUS=OK_STATUS), 0, '"kernel"'),
    "c-status-socket": row("coredamctl", "status", served_on_the_socket, 0,
                           "Counters:     from coredamd's coredump socket"),
    "c-status-socket-json": row("coredamctl", "status --json", served_on_the_socket, 0, '"source": "socket"'),
    "c-status-no-proc": row("coredamctl", "status", no_proc_sys_kernel, 1, "cannot read"),
    "c-watch-no-proc": row("coredamctl", "watch", no_proc_sys_kernel, 1, "cannot read"),
    "c-reload-no-agent": row("coredamctl", "reload", healthy, 3, "agent not reachable"),
    "c-reload": row("coredamctl", "reload", agent_answers(RELOAD="OK\n"), 0, ""),
    "c-reload-refused": row("coredamctl", "reload", agent_answers(
        RELOAD="ERR /etc/coredam/coredam.conf:3: bad value\n"), 1, "keeps the running one"),
    "c-set-no-agent": row("coredamctl", "set concurrency 3", healthy, 3, "agent not reachable"),
    "c-set-persist-no-agent": row("coredamctl", "set --persist concurrency 3", healthy, 3,
                                  "persisted [Limits] Concurrency=3"),
    "c-set": row("coredamctl", "set concurrency 3", agent_answers(SET="OK\nconcurrency=3\n"), 0, "concurrency=3"),
    "c-set-refused": row("coredamctl", "set floor 1G", agent_answers(SET="ERR floor above ceiling\n"), 1,
                         "agent refused floor=1G: floor above ceiling"),
    "c-set-root-only": row("coredamctl", "set concurrency 3", agent_answers(SET="ERR permission denied\n"), 4,
                           "permission denied"),
    "c-reload-root-only": row("coredamctl", "reload", agent_answers(RELOAD="ERR permission denied\n"), 4,
                              "permission denied"),
    "c-set-persist-wrong-mode": row("coredamctl", "set --persist bandwidth 15M", adaptive_mode, 1,
                                    "not persisted"),
    "c-doctor": row("coredamctl", "doctor", healthy, 0, "0 problem(s)"),
    "c-doctor-agent": row("coredamctl", "doctor", agent_answers(PING="OK\n"), 0, "coredamd answers on"),
    "c-doctor-stock": row("coredamctl", "doctor", stock_kernel, 0, "[WARN] kernel lacks the coredam patches"),
    "c-doctor-required": row("coredamctl", "doctor", stock_kernel_required, 1,
                             "[FAIL] kernel lacks the coredam patches"),
    # the verdict: which of the three paths protects the machine now
    "c-doctor-path-kernel": row("coredamctl", "doctor", healthy, 0, "[ OK ] path: the kernel series"),
    "c-doctor-path-socket": row("coredamctl", "doctor", socket_path_in_force, 0,
                                "[ OK ] path: the coredump socket {tmp}/sock/socket, served by coredamd"),
    "c-doctor-socket-no-patch-needed": row("coredamctl", "doctor", socket_path_in_force, 0,
                                           "[ OK ] kernel without the coredam patches"),
    "c-doctor-socket-destination": row("coredamctl", "doctor", socket_path_no_destination, 0,
                                       "[ OK ] free space at {cores}"),
    "c-doctor-path-pipe": row("coredamctl", "doctor", pipe_path_in_force, 0,
                              "[ OK ] path: the pipe helper {tmp}/coredam-pipe"),
    "c-doctor-pipe-socket-advice": row("coredamctl", "doctor", pipe_path_in_force, 0,
                                       "this kernel has the coredump socket: with [Socket] SetCorePattern=yes"),
    "c-doctor-path-not-yet": row("coredamctl", "doctor", socket_path_not_yet, 0,
                                 "[WARN] path: none yet: core_pattern is \"core\"; coredamd sets @@{tmp}/sock/socket"),
    "c-doctor-path-none": row("coredamctl", "doctor", stock_kernel, 0,
                              "[WARN] path: none: core_pattern \"core\" on a kernel without the series"),
    "c-doctor-path-none-socket-advice": row("coredamctl", "doctor", socket_kernel, 0,
                                            "set [Socket] SetCorePattern=yes"),
    "c-doctor-path-none-required": row("coredamctl", "doctor", stock_kernel_required, 1, "[FAIL] path: none"),
    "c-doctor-path-other-server": row("coredamctl", "doctor", another_socket_server, 0,
                                      "[WARN] path: none: core_pattern \"@@/run/systemd/coredump\" names another"),
    "c-doctor-path-other-helper": row("coredamctl", "doctor", another_pipe_helper, 0,
                                      "[WARN] path: none: core_pattern pipes to /bin/true, not to coredam-pipe"),
    "c-doctor-bad-config": row("coredamctl", "doctor", bad_value, 1, "[FAIL] configuration: "),
    "c-doctor-no-cgroupfs": row("coredamctl", "doctor", no_cgroupfs, 1, "[FAIL] no cgroup file system"),
    "c-doctor-cgroup-v1": row("coredamctl", "doctor", cgroup_v1_only, 1, "[FAIL] cgroup v1 only"),
    "c-doctor-no-io": row("coredamctl", "doctor", no_io_controller, 1, "controller io not available"),
    "c-doctor-no-proc": row("coredamctl", "doctor", no_proc_sys_kernel, 1, "[FAIL] {proc}/sys/kernel"),
    "c-list-none": row("coredamctl", "list", healthy, 0, "No cores kept in {cores}."),
    "c-list": row("coredamctl", "list", kept_core, 0, "SIGSEGV"),
    "c-list-json": row("coredamctl", "list --json", kept_core, 0, '"state": "complete"'),
    "c-list-extra": row("coredamctl", "list extra", healthy, 2, 'unexpected argument "extra"'),
    "c-list-not-a-dir": row("coredamctl", "list", cores_dir_is_a_file, 1, "Not a directory"),
    "c-info": row("coredamctl", "info 42", kept_core, 0, "   Command: crasher"),
    "c-info-by-name": row("coredamctl", "info core.crasher.42.100", kept_core, 0, "       PID: 42"),
    "c-info-none": row("coredamctl", "info 43", kept_core, 1, "no core 43 kept in {cores}"),
    "c-info-no-id": row("coredamctl", "info", kept_core, 2, "which core?"),
    "c-dump": row("coredamctl", "dump 42", kept_core, 0, "a core"),
    "c-dump-to-file": row("coredamctl", "dump -o {tmp}/out 42", kept_core, 0, ""),
    "c-dump-no-overwrite": row("coredamctl", "dump -o {cores}/core.crasher.42.100 42", kept_core, 1,
                               "File exists"),
    # vacuum: 0 done (nothing to remove too), 1 configuration refused or a removal failed, 2 usage,
    # 4 only root (the directory's owner) removes cores
    "c-vacuum-none": row("coredamctl", "vacuum", healthy, 0, "No cores kept in {cores}."),
    "c-vacuum-within": row("coredamctl", "vacuum", kept_core, 0, "Removed 0 cores"),
    "c-vacuum": row("coredamctl", "vacuum", kept_cores_over_max_use, 0, "removed {cores}/core.crasher.42.100 ("),
    "c-vacuum-dry-run": row("coredamctl", "vacuum --dry-run", kept_cores_over_max_use, 0,
                            "would remove {cores}/core.crasher.41.50 ("),
    "c-vacuum-extra": row("coredamctl", "vacuum extra", healthy, 2, 'unexpected argument "extra"'),
    "c-vacuum-bad-config": row("coredamctl", "vacuum", keep_free_below_floor, 1,
                               "KeepFree= is below FreeSpaceFloor="),
    "c-vacuum-not-root": row("coredamctl", "vacuum", cores_dir_of_another_user, 4, "run as root"),
    "c-vacuum-not-a-dir": row("coredamctl", "vacuum", cores_dir_is_a_file, 1, "Not a directory"),

    # coredam-pipe(8), EXIT STATUS: 0 stored, 1 write failed, 2 usage, 3
    # dropped, 4 RLIMIT_CORE, 5 destination refused, 6 below the floor, 7 a
    # repeat;
    # --check and --decompress use 0, 5 and 1
    "p-help": row("coredam-pipe", "--help", healthy, 0, "Usage: coredam-pipe"),
    "p-version": row("coredam-pipe", "--version", healthy, 0, "coredam-pipe "),
    "p-unknown-option": row("coredam-pipe", "--bogus", healthy, 2, "unrecognized option"),
    "p-missing-argument": row("coredam-pipe", "--config", healthy, 2, "requires an argument"),
    "p-check-no-dir": row("coredam-pipe", "--check", healthy, 2, "Usage: coredam-pipe"),
    "p-check-two-dirs": row("coredam-pipe", "--check {cores} {cores}", healthy, 2, "Usage: coredam-pipe"),
    "p-decompress-extra": row("coredam-pipe", "--decompress extra", healthy, 2, "Usage: coredam-pipe"),
    "p-check-missing": row("coredam-pipe", "--check {tmp}/nowhere", healthy, 5, "destination {tmp}/nowhere refused"),
    "p-check-relative": row("coredam-pipe", "--check cores", healthy, 5, "destination cores refused"),
    "p-check-world-writable": row("coredam-pipe", "--check {tmp}/open", world_writable_dir, 5,
                                  "destination {tmp}/open refused"),
    "p-decompress": row("coredam-pipe", "--decompress", zstd_stdin, 0, "a core"),
    "p-decompress-garbage": row("coredam-pipe", "--decompress", garbage_stdin, 1, "not a complete zstd stream"),
}


def root_options(program: str, r: FakeRoot):
    common = ["--config", str(r.conf), "--proc-root", str(r.proc), "--cgroup-root", str(r.cgroup)]
    if program == "coredamd":
        return common + ["--config-dir", str(r.confd), "--sys-root", str(r.sys), "--state-dir", str(r.state)]
    if program == "coredamctl":
        return common + ["--sys-root", str(r.sys), "--state-dir", str(r.state)]
    return common + ["--config-dir", str(r.confd), "--state-dir", str(r.state)]


def run(bins: Path, r: FakeRoot, t: Row):
    paths = {"tmp": r.tmp, "proc": r.proc, "state": r.state, "cores": r.cores, "last_line": len(r.config_lines)}
    args = [a.format(**paths) for a in t.args]
    argv = [str(bins / t.program)] + (root_options(t.program, r) if t.roots else []) + args
    # no journal, no service manager, no terminal: every log line goes to stderr
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    p = subprocess.run(argv, input=r.stdin, capture_output=True, env=env, cwd=r.tmp,
                       timeout=20)
    return p, t.says.format(**paths)


@pytest.mark.parametrize("name", list(TABLE))
def test_exit_code(bins, tmp_path, name):
    t = TABLE[name]
    r = FakeRoot(tmp_path)
    try:
        t.setup(r)
        p, says = run(bins, r, t)
    finally:
        r.close()
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    shown = f"$ {t.program} {' '.join(t.args)}\n--- stdout\n{out[-2000:]}--- stderr\n{err[-2000:]}"
    assert p.returncode == t.code, f"exit code {p.returncode}, expected {t.code}\n{shown}"
    assert says in out + err, f"{says!r} not printed\n{shown}"
    if t.program == "coredamctl" and t.code == 2:
        # coredamctl(1): one line says what is wrong, a second where the command's help is
        assert "\nTry 'coredamctl " in "\n" + err, f"no line saying where the help is\n{shown}"


def test_coredamd_clean_shutdown_exits_0(bins, tmp_path):
    """coredamd(8): SIGTERM restores the sysctls, removes socket and metrics, exits 0."""
    r = FakeRoot(tmp_path)
    before = (r.proc / "sys/kernel/core_max_concurrency").read_text()
    r.configure("[Limits]", "Concurrency=5")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    p = subprocess.Popen([str(bins / "coredamd")] + root_options("coredamd", r), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 10
        while not (r.state / "metrics.prom").exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        running = p.poll() is None
        knob = (r.proc / "sys/kernel/core_max_concurrency").read_text()
        metrics = (r.state / "metrics.prom").read_text() if running else ""
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = err.decode(errors="replace")
    assert running and knob.strip() == "5", f"not ready: concurrency knob {knob!r}\n{err}"
    # what it published while it ran is a metrics file a scraper accepts
    check_metrics(metrics)
    assert "\ncoredam_concurrency 5\n" in metrics, metrics
    assert p.returncode == 0, f"exit code {p.returncode}\n{err}"
    assert "sysctls restored" in err, err
    assert (r.proc / "sys/kernel/core_max_concurrency").read_text() == before
    assert not r.socket.exists() and not (r.state / "metrics.prom").exists(), sorted(os.listdir(r.state))


def test_socket_pattern_outlives_the_daemons_restore(bins, tmp_path):
    """coredamd(8): coredamd.service's ExecStopPost= (--core-pattern=restore,
    run when the daemon dies too) leaves a socket's core_pattern: the
    socket systemd holds still takes dumps for the next daemon.
    coredam-socket.service's ExecStop= (--core-pattern=restore-socket) puts
    the old one back, and its ExecReload= (--core-pattern=socket again)
    does so once the configuration no longer asks for the socket."""
    r = FakeRoot(tmp_path)
    socket_bound(r)
    # a plain file stands for the sysctl, written over in place: the old
    # pattern as long as the socket's, so that each write covers the other
    socket_pattern = f"@@{r.tmp}/sock/socket"
    before = "/var/crash/" + "x" * (len(socket_pattern) - len("/var/crash//core.%p")) + "/core.%p"
    r.write("proc/sys/kernel/core_pattern", before + "\n")

    def step(mode):
        p, _ = run(bins, r, row("coredamd", f"--core-pattern={mode}", lambda _: None, 0, ""))
        return p.returncode, (r.proc / "sys/kernel/core_pattern").read_text().strip(), p.stderr.decode()

    assert step("socket")[:2] == (0, socket_pattern)
    assert step("restore")[:2] == (0, socket_pattern)
    assert step("restore-socket")[:2] == (0, before)
    # applied again, then again once [Socket] SetCorePattern= is gone
    assert step("socket")[:2] == (0, socket_pattern)
    r.config_lines.remove("SetCorePattern=yes")
    r.write_config()
    assert step("socket")[:2] == (0, before)


def test_table_covers_every_documented_code():
    """Each program's table rows reach every exit code its man page lists but the left-out ones."""
    documented = {"coredamd": set(range(8)), "coredamctl": set(range(5)),
                  # 3, 4, 6 and 7 only on the helper's dump path (see the module's docstring)
                  "coredam-pipe": {0, 1, 2, 5}}
    for program, codes in documented.items():
        reached = {t.code for t in TABLE.values() if t.program == program}
        assert reached == codes, (program, sorted(reached), sorted(codes))


def test_coredamctl_gdb_runs_gdb_on_a_kept_core(bins, tmp_path):
    """coredamctl(1) gdb: gdb reads the kept core (a zstd one decompressed
    into a directory of its own under /var/tmp, removed when gdb exits),
    gets the arguments after ID, and its exit status is coredamctl's; with
    no gdb, 127 and why."""
    import corefile

    core = corefile.core(corefile.crash_notes(b"crasher", 11, 42), [(0x400000, b"\xcc" * 4096)])
    r = FakeRoot(tmp_path)
    try:
        r.write("cores/core.crasher.42.100", "")
        (r.cores / "core.crasher.42.100").write_bytes(core)
        r.write("cores/core.crasher.42.100.json", KEPT_META.replace('"size":7,"disk_size":7',
                                                                    f'"size":{len(core)},"disk_size":{len(core)}'))
        zst = subprocess.run(["zstd", "-q", "-c"], input=core, capture_output=True, check=True).stdout
        (r.cores / "core.crasher.43.200.zst").write_bytes(zst)
        r.write("cores/core.crasher.43.200.zst.json", KEPT_META.replace("core.crasher.42.100", "core.crasher.43.200.zst")
                .replace('"pid":42', '"pid":43').replace('"time":100', '"time":200')
                .replace('"compression":"none"', '"compression":"zstd"')
                .replace('"size":7,"disk_size":7', f'"size":{len(core)},"disk_size":{len(zst)}'))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(tmp_path)}
        before = sorted(p.name for p in Path("/var/tmp").glob("coredamctl-gdb.*"))

        def gdb(*args, path=None):
            e = dict(env, PATH=path) if path else env
            return subprocess.run([str(bins / "coredamctl")] + root_options("coredamctl", r) + ["gdb", *args],
                                  capture_output=True, text=True, env=e, cwd=tmp_path, timeout=60)

        for pid in ("42", "43"):
            p = gdb(pid, "-nx", "-batch", "-ex", "info registers rip")
            assert p.returncode == 0, (pid, p.stdout, p.stderr)
            assert "Program terminated with signal SIGSEGV" in p.stdout + p.stderr, (pid, p.stdout, p.stderr)
        # gdb's own exit status
        p = gdb("42", "-nx", "-batch", "-ex", "quit 3")
        assert p.returncode == 3, (p.stdout, p.stderr)
        assert sorted(p.name for p in Path("/var/tmp").glob("coredamctl-gdb.*")) == before
        # no such core; no gdb
        p = gdb("44", "-batch")
        assert p.returncode == 1 and "no core 44 kept" in p.stderr, p.stderr
        nogdb = tmp_path / "bin"
        nogdb.mkdir()
        p = gdb("42", "-batch", path=str(nogdb))
        assert p.returncode == 127 and "cannot run gdb" in p.stderr, (p.returncode, p.stderr)
    finally:
        r.close()


def test_coredamctl_reload_returns_with_the_new_configuration_in_force(bins, tmp_path):
    """coredamctl(1) reload (ExecReload=): when it exits 0 the agent runs
    the configuration it read, its knob written and its status saying so;
    a refused one exits 1 and leaves both as they were."""
    r = FakeRoot(tmp_path)
    r.configure("[Limits]", "Concurrency=5")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    knob = r.proc / "sys/kernel/core_max_concurrency"
    p = subprocess.Popen([str(bins / "coredamd")] + root_options("coredamd", r), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=tmp_path)

    def ctl(*args):
        return subprocess.run([str(bins / "coredamctl")] + root_options("coredamctl", r) + list(args),
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=20)

    try:
        deadline = time.monotonic() + 10
        while knob.read_text().strip() != "5" and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert p.poll() is None and knob.read_text().strip() == "5", knob.read_text()
        r.configure("Concurrency=7")
        res = ctl("reload")
        # no wait: in force as the command returns
        assert res.returncode == 0, res.stderr
        assert knob.read_text().strip() == "7", knob.read_text()
        status = json.loads(ctl("status", "--json").stdout)
        assert status["agent"]["concurrency"] == 7, status["agent"]
        r.configure("Concurrency=lots")
        res = ctl("reload")
        assert res.returncode == 1 and "keeps the running one" in res.stderr, res.stderr
        assert knob.read_text().strip() == "7"
        assert json.loads(ctl("status", "--json").stdout)["agent"]["concurrency"] == 7
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
        r.close()
