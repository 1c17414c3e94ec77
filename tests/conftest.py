import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vm  # noqa: E402


@pytest.fixture
def boot():
    """boot(script=..., kernel="stock"|"patched", sysctls={...}, ...) -> vm.Result"""
    return vm.boot
