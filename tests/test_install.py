"""make install and make uninstall into a DESTDIR, on the host: the paths
follow PREFIX, SYSCONFDIR and LIBEXECDIR end to end (the units, and the
programs' own defaults), systemd's helper is found where systemd keeps it,
and uninstall leaves only the site's configuration."""

import os
import pathlib
import re
import subprocess

TOP = pathlib.Path(__file__).resolve().parent.parent


def make(*args):
    res = subprocess.run(["make", "--no-print-directory", "-C", str(TOP), *args],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res


def files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())


def test_install_follows_the_paths_and_uninstall_removes_it(tmp_path):
    dest = tmp_path / "root"
    paths = ["PREFIX=/usr/local", "SYSCONFDIR=/usr/local/etc", "LIBEXECDIR=/usr/local/lib/cd",
             f"O={tmp_path / 'build'}", f"DESTDIR={dest}"]
    res = make("install", *paths)
    assert "deps:" not in res.stdout + res.stderr, "make install ran the developer dependencies"
    installed = files(dest)
    for f in ["usr/local/sbin/coredamd", "usr/local/bin/coredamctl",
              "usr/local/lib/cd/coredam/coredam-pipe", "usr/local/etc/coredam/coredam.conf",
              "usr/local/lib/systemd/system/coredamd.service",
              "usr/local/share/man/man1/coredamctl.1"]:
        assert f in installed, installed
    assert not [f for f in installed if not f.startswith("usr/local/")], installed

    unit = (dest / "usr/local/lib/systemd/system/coredamd.service").read_text()
    assert "ExecStart=/usr/local/sbin/coredamd " in unit
    assert "ExecReload=/usr/local/bin/coredamctl reload" in unit
    sysctl_unit = (dest / "usr/local/lib/systemd/system/coredam-sysctl.service").read_text()
    for text in (unit, sysctl_unit):
        assert not re.search(r"@[A-Z_]+@", text), text
    helper = next(line for line in sysctl_unit.splitlines()
                  if line.startswith("ExecStart=")).split("=", 1)[1].split()[0]
    assert os.access(helper, os.X_OK), f"{helper}: systemd-sysctl is not there"

    # the programs' defaults: the configuration and the pipe helper where they went
    dump = subprocess.run([str(dest / "usr/local/sbin/coredamd"), "--dump-config",
                           "-c", str(tmp_path / "none.conf")],
                          capture_output=True, text=True, timeout=30)
    assert dump.returncode == 0, dump.stderr
    assert "\nProgram=/usr/local/lib/cd/coredam/coredam-pipe\n" in dump.stdout, dump.stdout
    usage = subprocess.run([str(dest / "usr/local/bin/coredamctl"), "--help"],
                           capture_output=True, text=True, timeout=30)
    assert "default /usr/local/etc/coredam/coredam.conf" in usage.stdout, usage.stdout

    make("uninstall", *paths)
    assert files(dest) == ["usr/local/etc/coredam/coredam.conf"], files(dest)
