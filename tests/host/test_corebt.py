"""The host side of a core's backtrace (tests/harness/corebt.py): the
mapped files' paths read from a core's NT_FILE note, and the sysroot
copied out of an ext4 image by those paths, which are the crashed
process's own strings: a hostile one must copy nothing, and nothing may
land outside the sysroot. gdb on a real core is the Apache VM test's."""

import struct
import subprocess

import pytest
from corefile import core

from harness import corebt, elfcore


def file_note(paths):
    """An NT_FILE note's desc: count, page size, a (start, end, offset)
    per path, then the NUL-terminated paths."""
    desc = struct.pack("<QQ", len(paths), 4096)
    for i in range(len(paths)):
        desc += struct.pack("<QQQ", 0x400000 + i * 0x1000, 0x401000 + i * 0x1000, 0)
    return desc + b"".join(p.encode() + b"\0" for p in paths)


def test_file_note_paths_each_once_in_order():
    paths = ["/usr/sbin/apache2", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/sbin/apache2",
             "/dev/zero (deleted)"]
    c = elfcore.parse(core([(elfcore.NT_FILE, file_note(paths))]))
    assert c["files"] == ["/usr/sbin/apache2", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                          "/dev/zero (deleted)"]
    assert elfcore.parse(core([]))["files"] == []


def test_file_note_cut_short_is_refused():
    desc = file_note(["/a", "/b"])
    with pytest.raises(ValueError, match="NT_FILE"):
        elfcore.parse(core([(elfcore.NT_FILE, desc[:-3])]))
    # a count that claims more entries than the note holds
    with pytest.raises(ValueError, match="NT_FILE"):
        elfcore.parse(core([(elfcore.NT_FILE, struct.pack("<QQ", 1 << 40, 4096))]))


def test_sysroot_copies_plain_paths_only(tmp_path):
    top = tmp_path / "root"
    (top / "usr/lib").mkdir(parents=True)
    (top / "usr/lib/libx.so").write_bytes(b"\x7fELF lib")
    (top / "etc").mkdir()
    (top / "etc/secret").write_text("no")
    (top / "a b").write_text("space")
    image = tmp_path / "root.img"
    subprocess.run(["mkfs.ext4", "-q", "-F", "-d", str(top), str(image), "4M"], check=True)
    dest = tmp_path / "sys"
    hostile = ["/usr/lib/../../etc/secret", "/a b", "usr/lib/libx.so", "/usr/lib/./libx.so",
               "/x\n/etc/secret", "/dev/zero (deleted)", "/usr/lib/libx.so; dump /etc/secret x",
               "/usr/lib/missing.so"]
    got = corebt.sysroot(image, ["/usr/lib/libx.so"] + hostile, dest)
    assert got == ["/usr/lib/libx.so"]
    assert (dest / "usr/lib/libx.so").read_bytes() == b"\x7fELF lib"
    # nothing else anywhere: not the refused files, not outside the sysroot
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
                  if p.is_file() and not p.is_relative_to(top)) == ["root.img", "sys/usr/lib/libx.so"]
    # the benchmark's next core of the same image: the same sysroot again
    # (its /bin link, made before, points nowhere)
    assert corebt.sysroot(image, ["/usr/lib/libx.so"], dest) == ["/usr/lib/libx.so"]
