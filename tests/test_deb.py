"""The Debian package (debian/, `make deb`): what it holds, checked on the
host, and what it does, installed with dpkg in the Debian 12 guest with
systemd as PID 1 (scripts/mkrootfs.sh) on the stock kernel.

- `make deb` built it with dpkg-buildpackage and lintian passed it: no
  error, no warning (build/deb/lintian.txt).
- The package holds the programs with /etc and /usr/libexec as their
  compiled-in defaults, the units where bookworm keeps packaged ones with
  the paths filled in, /etc/coredam/coredam.conf as its one conffile, and
  maintainer scripts that enable coredamd.service, coredam-sysctl.service
  and coredump.slice.
- In the guest, the copy `make install` put into the image is taken away
  first (stopped, disabled, every file it installed removed: mkrootfs.sh
  lists them), so that what is there after `dpkg -i` came from the package:
  every file `make install` installs is back, coredamd is active,
  `coredamctl status` answers, and with the stock kernel's step of
  docs/deployment.md ([Pipe] SetCorePattern=yes) a crash is kept by
  coredam-pipe and listed by `coredumpctl list` as a core present in
  /var/lib/coredam/cores.
- `dpkg -r` stops the agent, which puts back the core_pattern found before
  the install, and takes every unit and file away but the conffile;
  `dpkg --purge` takes the conffile, the enablement links and the kept
  cores too, and leaves the drop-in the site wrote itself.
"""

import re
import subprocess

from harness.kernels import ROOTFS
from harness.paths import BUILD
from harness.qemu import boot as qemu_boot

DEB_DIR = BUILD / "deb"
UNITS = ["coredamd.service", "coredam-sysctl.service", "coredam-socket.service", "coredamd.socket", "coredump.slice",
         "coredump-kernel.slice"]
# the units the package enables and starts, as docs/deployment.md has an
# operator do after `make install`
ENABLED = ["coredamd.service", "coredam-sysctl.service", "coredump.slice"]
PIPE_PATTERN = "|/usr/libexec/coredam/coredam-pipe /var/lib/coredam/cores %P %u %g %s %t %c %d %e"


def deb_path():
    debs = sorted(p for p in DEB_DIR.glob("coredam_*.deb"))
    if not debs or not (DEB_DIR / "lintian.txt").exists():
        raise FileNotFoundError(f"no package with a lintian report in {DEB_DIR}: run 'make deb'")
    return debs[-1]


def dpkg_deb(*args):
    res = subprocess.run(["dpkg-deb", *args], capture_output=True, timeout=60)
    assert res.returncode == 0, res.stderr.decode(errors="replace")
    return res.stdout


def test_package_built_lintian_clean_with_the_files_and_scripts(tmp_path):
    deb = deb_path()
    report = (DEB_DIR / "lintian.txt").read_text()
    # --fail-on error,warning let it through; the report says so too
    assert not re.search(r"^[EW]: ", report, re.M), report
    assert dpkg_deb("-f", str(deb), "Package").decode().strip() == "coredam"
    depends = dpkg_deb("-f", str(deb), "Depends").decode()
    assert "libc6" in depends and "libsystemd0" in depends, depends

    names = {line.split()[5] for line in dpkg_deb("-c", str(deb)).decode().splitlines()}
    for f in ["./usr/sbin/coredamd", "./usr/bin/coredamctl", "./usr/libexec/coredam/coredam-pipe",
              "./etc/coredam/coredam.conf", "./etc/coredam/coredam.conf.d/",
              "./lib/systemd/system/systemd-coredump@.service.d/coredam.conf",
              "./usr/lib/sysctl.d/60-coredam.conf", "./usr/share/coredam/sysctl-cgroup.conf",
              "./usr/share/bash-completion/completions/coredamctl",
              "./usr/share/man/man1/coredamctl.1.gz", "./usr/share/man/man8/coredamd.8.gz",
              "./usr/share/man/man8/coredam-pipe.8.gz", "./usr/share/man/man5/coredam.conf.5.gz",
              "./usr/share/doc/coredam/copyright"] + [f"./lib/systemd/system/{u}" for u in UNITS]:
        assert f in names, sorted(names)
    # nothing of the developer's tree: no kernel, test program or object
    assert not [n for n in names if re.search(r"bzImage|/guest/|\.o$|\.a$", n)], sorted(names)

    ctrl = tmp_path / "DEBIAN"
    dpkg_deb("-e", str(deb), str(ctrl))
    assert (ctrl / "conffiles").read_text().split() == ["/etc/coredam/coredam.conf"]
    postinst = (ctrl / "postinst").read_text()
    for u in ENABLED:
        assert f"deb-systemd-helper enable '{u}'" in postinst, postinst
    assert "enable 'coredump-kernel.slice'" not in postinst, postinst
    # the slice is started, never restarted by an upgrade (the dumps in it)
    assert re.search(r"deb-systemd-invoke \$_dh_action 'coredam-sysctl.service' 'coredamd.service'",
                     postinst), postinst
    assert "deb-systemd-invoke start 'coredump.slice'" in postinst, postinst
    assert "systemd-sysctl 60-coredam.conf" in postinst, postinst
    assert "deb-systemd-invoke stop" in (ctrl / "prerm").read_text()
    assert "rm -rf /var/lib/coredam" in (ctrl / "postrm").read_text()

    root = tmp_path / "root"
    dpkg_deb("-x", str(deb), str(root))
    unit = (root / "lib/systemd/system/coredamd.service").read_text()
    assert "ExecStart=/usr/sbin/coredamd --core-pattern=external" in unit, unit
    assert "ExecReload=/usr/bin/coredamctl reload" in unit, unit
    sysctl_unit = (root / "lib/systemd/system/coredam-sysctl.service").read_text()
    assert "ExecStart=/lib/systemd/systemd-sysctl /usr/share/coredam/sysctl-cgroup.conf" in sysctl_unit
    # the programs' own defaults: the configuration in /etc, the helper in /usr/libexec
    dump = subprocess.run([str(root / "usr/sbin/coredamd"), "--dump-config",
                           "-c", str(tmp_path / "none.conf")], capture_output=True, text=True, timeout=30)
    assert dump.returncode == 0, dump.stderr
    assert f"\nProgram={PIPE_PATTERN[1:].split()[0]}\n" in dump.stdout, dump.stdout
    usage = subprocess.run([str(root / "usr/bin/coredamctl"), "--help"], capture_output=True,
                           text=True, timeout=30)
    assert "default /etc/coredam/coredam.conf" in usage.stdout, usage.stdout


JOB = r"""
. /lib/coredam/lib.sh
. /lib/coredam/systemd.sh
UNITS="@UNITS@"
# the files of the image's make install that are there (a man page or an
# example the package keeps compressed counts as there)
present() {
	while read -r f; do
		f=${f#.}
		if [ -e "$f" ] || [ -e "$f.gz" ]; then echo "$f"; fi
	done < /lib/coredam/make-install.files
}
units_present() {
	for u in $UNITS; do
		if systemctl cat "$u" > /dev/null 2>&1; then echo "$u"; fi
	done
}
snapshot() {
	present > $RESULTS/present.$1
	units_present > $RESULTS/units.$1
	cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.$1
	systemctl is-active coredamd.service > $RESULTS/active.$1 || true
	systemctl is-active coredamd.socket > $RESULTS/socket-unit.$1 || true
	[ -e /run/coredam/coredump/socket ] && echo present > $RESULTS/socket.$1 || true
}

# the machine without coredam: the make-installed copy stopped (coredamd
# puts back what it changed), disabled and removed, file by file
systemctl disable --now --quiet coredamd.service coredam-sysctl.service coredump.slice
systemctl stop coredamd.socket
sed 's|^[.]||' /lib/coredam/make-install.files | xargs rm -f
sed 's|^[.]||' /lib/coredam/make-install.dirs | grep -e coredam -e 'coredump@' |
	xargs rmdir --ignore-fail-on-non-empty
rm -rf /var/lib/coredam /run/coredam
# and the slice's limits it set as runtime properties, as the package's postrm removes them
rm -rf /run/systemd/system.control/coredump.slice.d
systemctl daemon-reload
sed 's|^[.]||' /lib/coredam/make-install.files > $RESULTS/make-install.files
snapshot before
if command -v coredamd coredamctl; then echo "coredam still installed"; exit 1; fi

rc=0; dpkg -i $JOB/coredam.deb > $RESULTS/dpkg-i.log 2>&1 || rc=$?
echo $rc > $RESULTS/dpkg-i.rc
[ $rc = 0 ] || exit 0
snapshot installed
systemctl is-enabled @ENABLED@ > $RESULTS/enabled.installed 2>&1 || true
systemctl is-active coredump.slice > $RESULTS/slice.installed || true
dpkg-query -W -f='${Status} ${Version}\n${Conffiles}\n' coredam > $RESULTS/dpkg-query.installed
rc=0; coredamctl status > $RESULTS/status.txt 2>&1 || rc=$?
echo $rc > $RESULTS/status.rc

# the step docs/deployment.md gives a stock kernel: coredam-pipe as core_pattern
pipe_helper_on
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.active
systemd-run --quiet --slice=crashers.slice --unit=one /usr/local/bin/crasher -m 8
waitfor 60 "the crasher's core" sh -c 'ls /var/lib/coredam/cores | grep -q "^core[.]crasher[.].*[.]json$"' || true
pid=$(systemctl show -p ExecMainPID --value one)
echo $pid > $RESULTS/pid
waitfor 60 "coredumpctl to list the crash" sh -c "coredumpctl list -q --no-legend $pid > /dev/null 2>&1" || true
coredumpctl list --no-legend --no-pager > $RESULTS/cd.list 2>&1 || true
coredumpctl info --no-pager $pid > $RESULTS/cd.info 2>&1 || true
ls /var/lib/coredam/cores > $RESULTS/cores.installed

rc=0; dpkg -r coredam > $RESULTS/dpkg-r.log 2>&1 || rc=$?
echo $rc > $RESULTS/dpkg-r.rc
snapshot removed
ls /var/lib/coredam/cores > $RESULTS/cores.removed 2>&1 || true
rc=0; dpkg --purge coredam > $RESULTS/dpkg-purge.log 2>&1 || rc=$?
echo $rc > $RESULTS/dpkg-purge.rc
snapshot purged
# (the harness's own coredam-job and coredam-test files are no business of the package)
find /etc /var/lib \( -name '*coredam*' -o -name 'coredump.slice' -o -name 'coredump-kernel.slice' \) \
	! -name 'coredam-job*' ! -name 'coredam-test*' > $RESULTS/left.purged 2>/dev/null || true
ls -A /etc/coredam/coredam.conf.d > $RESULTS/dropins.purged 2>&1 || true
if [ -e /run/coredam ]; then echo /run/coredam; fi >> $RESULTS/left.purged
rc=0; dpkg-query -W coredam > /dev/null 2>&1 || rc=$?
echo $rc > $RESULTS/dpkg-query.purged
agent_log
"""


def lines(res, name):
    return res.text(name).split()


def test_deb_installed_keeps_a_core_for_coredumpctl_and_goes_away_cleanly():
    deb = deb_path()
    job = JOB.replace("@UNITS@", " ".join(UNITS)).replace("@ENABLED@", " ".join(ENABLED))
    res = qemu_boot(job, kernel="stock", rootfs=ROOTFS, files={"coredam.deb": deb}, timeout=900)
    log = res.text("agent.log") if res.path("agent.log").exists() else ""
    assert res.rc == 0, res.output + "\n--- agent log ---\n" + log

    # the guest had no coredam before the package: no file, no unit, no agent
    assert lines(res, "present.before") == [], res.text("present.before")
    assert lines(res, "units.before") == [], res.text("units.before")
    assert res.text("active.before").strip() != "active"
    before = res.text("pattern.before")
    assert before.startswith("|/lib/systemd/systemd-coredump "), before

    assert res.text("dpkg-i.rc").strip() == "0", res.text("dpkg-i.log")
    # every file make install installs is back, from the package
    make_installed = lines(res, "make-install.files")
    assert len(make_installed) >= 15 and "/usr/sbin/coredamd" in make_installed, make_installed
    assert lines(res, "present.installed") == make_installed, \
        sorted(set(make_installed) - set(lines(res, "present.installed")))
    assert sorted(lines(res, "units.installed")) == sorted(UNITS), res.text("units.installed")
    assert res.text("active.installed").strip() == "active", res.output + log
    # the coredump socket systemd holds for coredamd, started with it, not enabled on its own
    assert res.text("socket-unit.installed").strip() == "active", res.text("socket-unit.installed")
    assert res.text("socket.installed").strip() == "present"
    assert lines(res, "enabled.installed") == ["enabled"] * len(ENABLED), res.text("enabled.installed")
    assert res.text("slice.installed").strip() == "active"
    query = res.text("dpkg-query.installed")
    assert query.startswith("install ok installed "), query
    assert re.search(r"^ /etc/coredam/coredam\.conf [0-9a-f]{32}$", query, re.M), query
    assert res.text("status.rc").strip() == "0", res.text("status.txt")
    # the package's defaults leave core_pattern alone
    assert res.text("pattern.installed") == before

    # the crash: coredam-pipe kept its core, coredumpctl lists it
    assert res.text("pattern.active").strip() == PIPE_PATTERN, res.text("pattern.active")
    pid = res.text("pid").strip()
    kept = [n for n in lines(res, "cores.installed") if re.fullmatch(rf"core\.crasher\.{pid}\.\d+", n)]
    assert len(kept) == 1, res.text("cores.installed")
    rows = [line for line in res.text("cd.list").splitlines() if line.split()[4:5] == [pid]]
    assert len(rows) == 1, res.text("cd.list")
    assert re.search(r" SIGSEGV present +/usr/local/bin/crasher ", rows[0]), rows[0]
    info = res.text("cd.info")
    assert re.search(r"^\s*Storage: /var/lib/coredam/cores/" + re.escape(kept[0]) + r" \(present\)$",
                     info, re.M), info

    # dpkg -r: the agent stopped, core_pattern as before the install, the
    # units and files gone but the conffile, the kept cores still there
    assert res.text("dpkg-r.rc").strip() == "0", res.text("dpkg-r.log")
    assert res.text("pattern.removed") == before, (before, res.text("pattern.removed"))
    assert res.text("active.removed").strip() != "active"
    assert res.text("socket-unit.removed").strip() != "active" and not res.path("socket.removed").exists()
    assert lines(res, "units.removed") == [], res.text("units.removed")
    assert lines(res, "present.removed") == ["/etc/coredam/coredam.conf"], res.text("present.removed")
    assert kept[0] in lines(res, "cores.removed"), res.text("cores.removed")

    # dpkg --purge: the conffile, the enablement links, the cores; the
    # site's own drop-in stays
    assert res.text("dpkg-purge.rc").strip() == "0", res.text("dpkg-purge.log")
    assert res.text("pattern.purged") == before
    assert lines(res, "present.purged") == [], res.text("present.purged")
    assert lines(res, "units.purged") == [], res.text("units.purged")
    assert sorted(lines(res, "left.purged")) == ["/etc/coredam", "/etc/coredam/coredam.conf.d"], \
        res.text("left.purged")
    assert lines(res, "dropins.purged") == ["50-test.conf"], res.text("dropins.purged")
    assert res.text("dpkg-query.purged").strip() != "0"
