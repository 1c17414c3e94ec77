import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import qemu  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "quiet_machine: asserts an upper bound on latency or time, or "
        "depends on how fast the guest runs; `make test` runs these alone, after "
        "every build and every other guest is done")
    config.addinivalue_line(
        "markers", "storm_only: a long storm that proves nothing another test of "
        "`make test` does not; run by `make test-storm` only")


@pytest.fixture
def boot():
    """boot(script=..., kernel="stock"|"patched", sysctls={...}, ...) -> harness.job.Result"""
    return qemu.boot
