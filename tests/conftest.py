import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import qemu  # noqa: E402
from harness.setups import TEST_CONF  # noqa: E402

# the kernel the patched kernel's tests boot (make test-debug: patched-debug)
KERNEL = os.environ.get("COREDAM_KERNEL", "patched")

# the start of every agent_boot job: its configuration is $JOB/coredam.conf
AGENT_JOB = r"""mkdir -p /scratch/cores

. /lib/coredam/lib.sh
. /lib/coredam/agent.sh
K=/proc/sys/kernel
CONF=$JOB/coredam.conf
AGENT_CONF=$CONF
"""

# the start of every job of the kernel series' tests
SERIES_JOB = r"""
. /lib/coredam/lib.sh
. /lib/coredam/kernel_series.sh
"""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "quiet_machine: asserts an upper bound on latency or time, or "
        "depends on how fast the guest runs; `make test` runs these alone, after "
        "every build and every other guest is done")
    config.addinivalue_line(
        "markers", "storm_only: a long storm that proves nothing another test of "
        "`make test` does not; run by `make test-storm` only")
    config.addinivalue_line(
        "markers", "patched_7_3: boots Linux 7.3 with the series rebased onto it "
        "(kernel-patch/7.3); `make test` runs them in a lane that builds that kernel "
        "first, `make test-patched-7.3` alone")


@pytest.fixture
def boot():
    """boot(script=..., kernel="stock"|"patched", sysctls={...}, ...) -> harness.job.Result"""
    return qemu.boot


@pytest.fixture
def agent_boot(boot):
    """agent_boot(script, conf=TEST_CONF, ...): a job with tests/guest/agent.sh
    on the configuration conf, cores to /scratch/cores; fails on a job that
    failed, with the agent's log."""
    def run(script, kernel=KERNEL, conf=TEST_CONF, timeout=600, **kw):
        files = {"coredam.conf": conf}
        files.update(kw.pop("files", {}))
        res = boot(AGENT_JOB + script, kernel=kernel,
                   files=files, sysctls=kw.pop("sysctls", {"kernel.core_pattern":
                                                           "/scratch/cores/core.%p"}),
                   timeout=timeout, **kw)
        assert res.rc == 0, res.output + "\n--- agent log ---\n" + \
            (res.text("agent.log") if res.path("agent.log").exists() else "")
        return res
    return run


@pytest.fixture
def run(boot):
    """run(script, ...): a job of the kernel series' tests on the patched
    kernel, with tests/guest/kernel_series.sh; fails on a job that failed."""
    def _run(script, timeout=300, **kw):
        res = boot(SERIES_JOB + script, kernel=KERNEL, timeout=timeout, **kw)
        assert res.rc == 0, res.output
        return res
    return _run
