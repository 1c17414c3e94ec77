"""What a storm runs against: a kernel, its sysctls, and guest shell that
sets up (an agent with its configuration) and tears down; the setups the
benchmark and the demo share (data)."""

from dataclasses import dataclass, field

# @QUEUE_CAP@ in an agent's configuration is the scenario's queue cap;
# start_agent and stop_agent are tests/guest/agent.sh's
AGENT_START = """
. /lib/coredam/agent.sh
AGENT_CONF=/tmp/coredam.conf
cat > $AGENT_CONF <<'CONF'
{conf}
CONF
sed -i "s/@QUEUE_CAP@/$QUEUE_CAP/" $AGENT_CONF
start_agent || exit 1
{after_start}
"""

AGENT_STOP = """
ctl status --json > $RESULTS/status.json || true
cat /proc/$(cat /tmp/agent.pid)/stat > $RESULTS/agent.stat || true
cp /run/coredam/pipe/stats $RESULTS/pipe-stats 2>/dev/null || true
stop_agent
"""


@dataclass
class Setup:
    name: str
    kernel: str
    describe: str
    sysctls: dict = field(default_factory=dict)
    script: str = ""
    teardown: str = ""


def agent_setup(name, describe, conf, kernel="patched", after_start=""):
    """@after_start: guest shell run once the agent answers (its pid in
    /tmp/agent.pid)."""
    return Setup(name, kernel, describe, teardown=AGENT_STOP,
                 script=AGENT_START.format(conf=conf.strip(), after_start=after_start))


# The VM tests' agent: a fixed 10 MB/s, two dumps at once, 32 waiting
TEST_CONF = """\
[Agent]
Interval=500ms
[Cgroup]
Path=/coredump.slice
MemoryHigh=128M
[Limits]
WriteBandwidth=10M
Concurrency=2
QueueCap=32
[Space]
FreeSpaceFloor=100M
"""

# The fixed budget, the same for the stock kernel's helper and the kernel
# path: 10 MB/s, two dumps at once.
FIXED = """
[Agent]
Mode=fixed
Interval=500ms
[Cgroup]
Path=/coredump.slice
[Limits]
WriteBandwidth=10M
Concurrency=2
QueueCap=@QUEUE_CAP@
[Space]
FreeSpaceFloor=200M
"""

# A storm of one crasher is one crash signature: coredam-pipe would keep two
# of its cores ([Repeats] Keep=2, the default) and skip the rest, and remove
# the oldest past [Space] MaxUse= (10% of the scratch disk) and KeepFree=
# (twice the floor). The storms measure writing every core, as the kernel
# path does, and keep them all to check them.
ALL_CORES = """
[Repeats]
Keep=infinity
[Space]
MaxUse=infinity
KeepFree=0
"""

PIPE = """
[Pipe]
SetCorePattern=yes
Program=/usr/sbin/coredam-pipe
Directory=/scratch/cores
""" + ALL_CORES.lstrip("\n")

# coredamd serving the coredump socket (core_pattern "@@/run/coredam/coredump/socket",
# Linux 6.17 and later): its writers store where the pipe helper would
SOCKET = """
[Socket]
SetCorePattern=yes
[Pipe]
Directory=/scratch/cores
""" + ALL_CORES.lstrip("\n")

ADAPTIVE = """
[Agent]
Mode=adaptive
Interval=500ms
[Cgroup]
Path=/coredump.slice
[Limits]
QueueCap=@QUEUE_CAP@
[Adaptive]
Floor=10M
Ceiling=30M
ConcurrencyFloor=1
ConcurrencyCeiling=2
[Space]
FreeSpaceFloor=200M
"""

FIXED_DESCRIBE = "patched kernel + coredamd, fixed 10 MB/s, 2 dumps at once"
ADAPTIVE_DESCRIBE = ("patched kernel + coredamd, adaptive 10-30 MB/s (10 while somebody else "
                     "uses the disk), 1-2 dumps at once")


def variant(name, describe, conf, section, line, why=""):
    """A setup that puts back what a default replaced, or tries a knob:
    @conf with one more line, in a [@section] of its own at the end (a
    later value wins)."""
    return agent_setup(name, f"{describe}, {line}" + (f" ({why})" if why else ""),
                       f"{conf.rstrip()}\n[{section}]\n{line}\n")


SETUPS = [
    Setup("stock", "stock", "stock 6.12, file core_pattern, no limits"),
    # the floor: what the storm costs without its dumps (under TCG the
    # crashers themselves take CPU), the same crashes in the same scenario
    Setup("no-dumps", "stock",
          "stock 6.12 with an empty core_pattern: the same crashes, no core "
          "written (what the crashing processes cost by themselves)",
          sysctls={"kernel.core_pattern": ""}),
    Setup("skip", "stock",
          "stock 6.12, pipe core_pattern to a minimal helper (no write-behind "
          "window), core_pipe_limit=2: dumps beyond two at once are dropped",
          sysctls={"kernel.core_pattern": "|/bin/pipewriter -W 0 /scratch/cores/core.%p",
                   "kernel.core_pipe_limit": "2"}),
    agent_setup("userspace-cgroup",
                "stock 6.12 + coredamd + coredam-pipe: the helper queues for a slot "
                "and writes from the io.max-limited cgroup, fixed 10 MB/s, 2 at once",
                FIXED + PIPE, kernel="stock"),
    # series v1 (the dumping task moves into the dump cgroup) next to the
    # current series, with the same agent configuration; today's agent
    # cannot read v1's positional core_dump_stats and goes on without it
    agent_setup("v1-fixed",
                "series v1 kernel (git 3fdf619) + coredamd, fixed 10 MB/s, 2 dumps "
                "at once", FIXED, kernel="v1"),
    agent_setup("coredam-fixed", FIXED_DESCRIBE, FIXED),
    agent_setup("v1-adaptive",
                "series v1 kernel (git 3fdf619) + coredamd, adaptive 10-30 MB/s (10 while "
                "somebody else uses the disk), 1-2 dumps at once, no limit while nobody "
                "else uses the disk", ADAPTIVE, kernel="v1"),
    agent_setup("coredam-adaptive", ADAPTIVE_DESCRIBE + ", no limit while nobody else uses "
                "the disk (LiftWhenIdle=yes, the default)", ADAPTIVE),
    # what LiftWhenIdle= (on by default) replaced: the ceiling is the top
    # even when nobody else uses the disk
    variant("coredam-nolift", ADAPTIVE_DESCRIBE, ADAPTIVE, "Adaptive", "LiftWhenIdle=no",
            "the ceiling the top even on an otherwise idle disk"),
    # a smaller write-behind window: the dumps' requests are a quarter of
    # the default's, so a foreground request waits behind less of one
    variant("coredam-fixed-w128", FIXED_DESCRIBE, FIXED, "Limits", "WritebackWindow=128K"),
    variant("coredam-adaptive-w128", ADAPTIVE_DESCRIBE, ADAPTIVE, "Limits", "WritebackWindow=128K"),
    # the ceiling at half the disk instead of three quarters: what the
    # dumps may take while somebody else uses it
    variant("coredam-adaptive-c20", ADAPTIVE_DESCRIBE, ADAPTIVE, "Adaptive", "Ceiling=20M",
            "at most 20 MB/s while somebody else uses the disk"),
    # what CeilingWhenBusy= (the floor by default) replaced: while
    # somebody else uses the disk the budget climbs to the ceiling
    variant("coredam-adaptive-climb", ADAPTIVE_DESCRIBE, ADAPTIVE, "Adaptive", "CeilingWhenBusy=30M",
            "the ceiling the top while somebody else uses the disk"),
    # the agent's own CPU: its look through /proc and its work on each new
    # dump, at nice 10 instead of the foreground's priority
    agent_setup("coredam-adaptive-agentnice", ADAPTIVE_DESCRIBE + ", the agent itself at nice 10",
                ADAPTIVE, after_start="renice -n 10 -p $(cat /tmp/agent.pid) > /dev/null"),
    # the fixed budget at the rate the adaptive one's ceiling allows: rate
    # or movement, which costs the probe
    variant("coredam-fixed-20m", FIXED_DESCRIBE, FIXED, "Limits", "WriteBandwidth=20M",
            "twice the rate, fixed"),
    # what DumpNice=19 (the default) replaced: the dumps at the crashed
    # process's own CPU priority
    variant("coredam-fixed-keepnice", FIXED_DESCRIBE, FIXED, "Limits", "DumpNice=keep",
            "the dumps at their own CPU priority"),
    variant("coredam-adaptive-keepnice", ADAPTIVE_DESCRIBE, ADAPTIVE, "Limits", "DumpNice=keep",
            "the dumps at their own CPU priority"),
    # stock Linux 7.3 and its coredump socket: coredamd holds each dump
    # before its answer and paces it by how fast its writer (in the dump
    # cgroup) reads, with the same budgets as the patched kernel's setups
    Setup("stock-7.3", "stock-7.3", "stock 7.3, file core_pattern, no limits"),
    agent_setup("socket-7.3-fixed",
                "stock 7.3 + coredamd serving the coredump socket (@@): it holds each dump "
                "before its answer and writes it from the io.max-limited cgroup, fixed 10 MB/s, "
                "2 at once", FIXED + SOCKET, kernel="stock-7.3"),
    agent_setup("socket-7.3-adaptive",
                "stock 7.3 + coredamd serving the coredump socket (@@), adaptive 10-30 MB/s "
                "(10 while somebody else uses the disk), 1-2 at once", ADAPTIVE + SOCKET,
                kernel="stock-7.3"),
    # the socket server ahead of the crashers for the CPU: a crash holds
    # its memory until the server has read its request and answered it
    agent_setup("socket-7.3-adaptive-agentfirst",
                "stock 7.3 + coredamd serving the coredump socket (@@), adaptive 10-30 MB/s "
                "(10 while somebody else uses the disk), 1-2 at once, the agent itself at nice -5",
                ADAPTIVE + SOCKET, kernel="stock-7.3",
                after_start="renice -n -5 -p $(cat /tmp/agent.pid) > /dev/null"),
    # one dump writing at a time at the same budget: whether a second
    # writer, rather than the rate, costs the probe
    variant("coredam-adaptive-conc1", ADAPTIVE_DESCRIBE, ADAPTIVE, "Adaptive", "ConcurrencyCeiling=1",
            "one dump at a time"),
]
# not in the default run: they need `make kernel-v1`, and add a third to its time
OPTIONAL_SETUPS = {"v1-fixed", "v1-adaptive", "coredam-nolift", "coredam-fixed-w128",
                   "coredam-adaptive-w128", "coredam-fixed-keepnice", "coredam-adaptive-keepnice",
                   "coredam-adaptive-c20", "coredam-fixed-20m", "coredam-adaptive-climb",
                   "coredam-adaptive-agentnice", "coredam-adaptive-conc1", "stock-7.3",
                   "socket-7.3-adaptive-agentfirst"}
# the setup every probe is also compared with
FLOOR = "no-dumps"
