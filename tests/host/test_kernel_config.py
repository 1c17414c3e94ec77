"""A Kconfig fragment line that olddefconfig drops fails the kernel's
configuration, naming the line and what became of it."""

import subprocess

from harness.paths import TOP


def test_broken_fragment_option_is_named(tmp_path):
    bad = tmp_path / "bad.config"
    bad.write_text("CONFIG_COREDAM_NO_SUCH_OPTION=y\nCONFIG_EXT4_FS=m\n")
    p = subprocess.run(["scripts/build-kernel.sh", "--config-only", "stock"],
                       cwd=TOP, env={"KFRAGMENT_EXTRA": str(bad),
                                        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                       capture_output=True, text=True)
    assert p.returncode == 3, p.stderr
    assert "CONFIG_COREDAM_NO_SUCH_OPTION=y from bad.config did not survive" in p.stderr
    assert "CONFIG_EXT4_FS=m from bad.config did not survive olddefconfig: " \
        "CONFIG_EXT4_FS=y" in p.stderr
