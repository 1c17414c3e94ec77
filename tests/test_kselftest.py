"""The series' own kselftests (tools/testing/selftests/coredump), built
statically and run in the guest: they pass on the patched kernel, where a
skipped case is a failure (the feature is there, so the case did not run),
and skip, never fail, on the stock one."""

import os
import re
from pathlib import Path

import pytest

from harness.paths import BUILD

SELFTESTS = BUILD / "guest" / "selftests"
TESTS = sorted(p.name for p in SELFTESTS.glob("*_test")) if SELFTESTS.exists() else []
KERNEL = os.environ.get("COREDAM_KERNEL", "patched")

pytestmark = pytest.mark.skipif(not TESTS, reason="the series adds no kselftests")


def tap_totals(out):
    m = re.search(r"# Totals: pass:(\d+) fail:(\d+) xfail:(\d+) xpass:(\d+) skip:(\d+) error:(\d+)", out)
    assert m, out
    return dict(zip(("pass", "fail", "xfail", "xpass", "skip", "error"),
                    (int(x) for x in m.groups())))


@pytest.mark.parametrize("name", TESTS)
def test_kselftest_passes_on_patched(boot, name):
    res = boot(f"rc=0; /selftests/{name} || rc=$?\necho $rc > $RESULTS/selftest.rc\n",
               kernel=KERNEL, timeout=600)
    assert res.rc == 0, res.output
    t = tap_totals(res.output)
    assert res.text("selftest.rc").strip() == "0", res.output
    assert t["fail"] == 0 and t["error"] == 0 and t["skip"] == 0 and t["pass"] >= 1, \
        f"{t}\n{res.output}"


@pytest.mark.parametrize("name", TESTS)
def test_kselftest_skips_on_stock(boot, name):
    res = boot(f"rc=0; /selftests/{name} || rc=$?\necho $rc > $RESULTS/selftest.rc\n",
               kernel="stock", timeout=600)
    t = tap_totals(res.output)
    # every test skips; the harness exits 0 (or 4, KSFT_SKIP) for that
    assert res.text("selftest.rc").strip() in ("0", "4"), res.output
    assert t["fail"] == 0 and t["pass"] == 0 and t["skip"] >= 1, f"{t}\n{res.output}"
