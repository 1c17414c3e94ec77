"""make install and make uninstall into a DESTDIR, on the host: the paths
follow PREFIX, SYSCONFDIR and LIBEXECDIR end to end (the units, and the
programs' own defaults), systemd's helper is found where systemd keeps it,
uninstall leaves only the site's configuration, and what an operator types
into coredamctl (its help and its shell completion) agrees with it."""

import os
import pathlib
import re
import subprocess

import pytest

TOP = pathlib.Path(__file__).resolve().parents[2]


def make(*args):
    res = subprocess.run(["make", "--no-print-directory", "-C", str(TOP), *args],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res


def files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """make install into a DESTDIR once for the module: (DESTDIR, make's path arguments)."""
    tmp = tmp_path_factory.mktemp("install")
    dest = tmp / "root"
    paths = ["PREFIX=/usr/local", "SYSCONFDIR=/usr/local/etc", "LIBEXECDIR=/usr/local/lib/cd",
             f"O={tmp / 'build'}", f"DESTDIR={dest}"]
    res = make("install", *paths)
    assert "deps:" not in res.stdout + res.stderr, "make install ran the developer dependencies"
    return dest, paths


def test_install_only_installs(tmp_path):
    """make install builds the programs and installs them, nothing more:
    no step of its, in the recursive makes too, is the developer targets'
    scripts/deps.sh, which installs Debian packages (it prints nothing
    when none is missing, so the run above cannot tell)."""
    res = subprocess.run(["make", "-n", "install", f"O={tmp_path / 'build'}", f"DESTDIR={tmp_path / 'root'}"],
                         cwd=TOP, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "install -m 0755" in res.stdout or "install -m 755" in res.stdout, res.stdout[-3000:]
    assert "deps.sh" not in res.stdout and "apt-get" not in res.stdout, res.stdout[-3000:]


def ctl(dest, *args):
    return subprocess.run([str(dest / "usr/local/bin/coredamctl"), *args],
                          capture_output=True, text=True, timeout=30)


def test_install_follows_the_paths(installed, tmp_path):
    dest, _ = installed
    got = files(dest)
    for f in ["usr/local/sbin/coredamd", "usr/local/bin/coredamctl",
              "usr/local/lib/cd/coredam/coredam-pipe", "usr/local/etc/coredam/coredam.conf",
              "usr/local/lib/systemd/system/coredamd.service",
              "usr/local/share/man/man1/coredamctl.1",
              "usr/local/share/bash-completion/completions/coredamctl"]:
        assert f in got, got
    assert not [f for f in got if not f.startswith("usr/local/")], got

    unit = (dest / "usr/local/lib/systemd/system/coredamd.service").read_text()
    assert "ExecStart=/usr/local/sbin/coredamd " in unit
    assert "ExecReload=/usr/local/bin/coredamctl reload" in unit
    sysctl_unit = (dest / "usr/local/lib/systemd/system/coredam-sysctl.service").read_text()
    socket_unit = (dest / "usr/local/lib/systemd/system/coredam-socket.service").read_text()
    assert "ExecStart=/usr/local/sbin/coredamd --core-pattern=socket" in socket_unit, socket_unit
    for text in (unit, sysctl_unit, socket_unit):
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
    usage = ctl(dest, "--help")
    assert "default /usr/local/etc/coredam/coredam.conf" in usage.stdout, usage.stdout


def commands_of(help_text):
    """The command names of `coredamctl --help`."""
    block = help_text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines()]


def test_every_command_has_its_own_help_and_usage_errors_are_short(installed):
    dest, _ = installed
    top = ctl(dest, "--help")
    assert top.returncode == 0
    commands = commands_of(top.stdout)
    assert {"status", "watch", "set", "reload", "doctor", "help"} <= set(commands), commands
    for cmd in commands:
        for args in ([cmd, "--help"], ["help", cmd]):
            res = ctl(dest, *args)
            assert res.returncode == 0, (args, res.stderr)
            assert res.stdout.startswith(f"Usage: coredamctl [OPTIONS] {cmd}"), (args, res.stdout)
            assert "Exit codes:" in res.stdout and "Commands:" not in res.stdout, res.stdout
    # a usage error says what is wrong and where help is, not the whole help
    for args, what in [(["set", "bandwidth"], "coredamctl set: expected NAME VALUE"),
                       (["set", "nosuch", "1"], 'coredamctl set: unknown setting "nosuch"'),
                       (["set", "--bogus"], "coredamctl set: unrecognized option '--bogus'"),
                       (["status", "extra"], 'coredamctl status: unexpected argument "extra"'),
                       (["watch", "--interval=1ms"], "at least 100ms"),
                       (["help", "nosuch"], 'coredamctl help: unknown command "nosuch"'),
                       (["nosuch"], 'coredamctl: unknown command "nosuch"'),
                       ([], "coredamctl: no command given")]:
        res = ctl(dest, *args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert what in res.stderr, (args, res.stderr)
        assert "Try 'coredamctl" in res.stderr and "Usage:" not in res.stderr, (args, res.stderr)


def complete(dest, *words):
    """What bash completes for the command line WORDS (the last is being typed)."""
    script = (f"source {dest}/usr/local/share/bash-completion/completions/coredamctl\n"
              'COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _coredamctl\n'
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    res = subprocess.run(["bash", "--norc", "-c", script, "bash", "coredamctl", *words],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return [w for w in res.stdout.splitlines() if w]


def test_bash_completion_offers_what_the_program_accepts(installed):
    dest, _ = installed
    commands = commands_of(ctl(dest, "--help").stdout)
    assert sorted(complete(dest, "")) == sorted(commands)
    assert sorted(complete(dest, "s")) == ["set", "status"]
    assert sorted(complete(dest, "-c", "/etc/x", "help", "")) == sorted(commands)
    settings = complete(dest, "--socket", "=", "/run/x", "set", "--persist", "")
    # every setting completed is one set accepts, and the other way round
    help_text = ctl(dest, "set", "--help").stdout
    named = re.search(r"NAME is one of\n?(.*?)\.\n", help_text, re.S).group(1)
    assert sorted(settings) == sorted(n.strip() for n in named.replace("\n", " ").split(",")), settings
    assert complete(dest, "set", "mode", "") == ["fixed", "adaptive"]
    for opt in complete(dest, "--"):
        res = ctl(dest, opt.rstrip("=") + ("=x" if opt.endswith("=") else ""), "--help")
        assert "unrecognized option" not in res.stderr, (opt, res.stderr)
    assert "--interval=" in complete(dest, "watch", "--")


def test_uninstall_removes_all_but_the_sites_configuration(installed):
    dest, paths = installed
    make("uninstall", *paths)
    assert files(dest) == ["usr/local/etc/coredam/coredam.conf"], files(dest)
