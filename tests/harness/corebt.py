"""A core's backtrace as a user gets it: gdb -batch -ex bt on the host,
against the very binaries the guest ran, read out of its root file system
image (no debug symbols: Debian's -dbgsym packages live in an archive
this machine does not reach, so frames are named by the objects' dynamic
symbols).

The files a core maps are listed in its NT_FILE note: the crashed
process's own strings. Only plain absolute paths are taken from the image
(no "..", nothing but the characters of a file name debugfs can be given
unquoted), each to the same path under the sysroot, so no name in a core
writes anywhere else on the host."""

import os
import re
import subprocess
from pathlib import Path

from . import elfcore

# a path debugfs takes as one word and that stays under the sysroot
SAFE_PATH = re.compile(r"/[A-Za-z0-9._+-]+(?:/[A-Za-z0-9._+-]+)*")
# a library's file name and, first, the name it is linked by
SONAME = re.compile(r"(lib[A-Za-z0-9._+-]*?\.so\.\d+)(?:\.\d+)+")
# gdb's lines of a backtrace: "#3  0x00007f... in name () from /usr/lib/x.so"
FRAME = re.compile(r"^#(\d+)\s+(?:0x[0-9a-f]+ in )?(\S+) \(.*?\)(?: (?:from|at) (\S+))?", re.M)


def sysroot(image, files, dest):
    """Copy each of @files (NT_FILE's paths) that is a plain absolute path
    from the ext4 @image into @dest at the same path, a library also under
    the name it is linked by, and /lib, /lib64, /bin, /sbin as links into
    /usr; the paths copied."""
    plain = [f for f in files
             if SAFE_PATH.fullmatch(f) and "/../" not in f + "/" and "/./" not in f + "/"]
    # one debugfs for all, each file once (a sysroot serves every core of
    # the same image); debugfs reports a missing file on stderr, exits 0
    wanted = [f for f in plain if not (dest / f.lstrip("/")).exists()]
    for f in wanted:
        (dest / f.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    if wanted:
        subprocess.run(["debugfs", "-f", "-", str(image)], capture_output=True, check=True,
                       timeout=300, text=True,
                       input="".join(f"dump -p {f} {dest / f.lstrip('/')}\n" for f in wanted))
    got = []
    for f in plain:
        out = dest / f.lstrip("/")
        if out.exists() and out.stat().st_size:
            got.append(f)
            # the name the dynamic linker knew it by: libfoo.so.1 of libfoo.so.1.2.3
            soname = SONAME.fullmatch(out.name)
            if soname and not (out.parent / soname.group(1)).exists():
                (out.parent / soname.group(1)).symlink_to(out.name)
            # the dynamic linker, by the name programs ask for (PT_INTERP)
            if out.name.startswith("ld-linux") and not f.startswith("/usr/lib64/"):
                (dest / "usr/lib64").mkdir(parents=True, exist_ok=True)
                if not (dest / "usr/lib64" / out.name).exists():
                    (dest / "usr/lib64" / out.name).symlink_to(out)
    # a merged /usr, as Debian's: the linker's /lib/... is /usr/lib/...
    for d in ("bin", "sbin", "lib", "lib64"):
        # lexists: a link made for an earlier core may point nowhere
        if not os.path.lexists(dest / d):
            (dest / d).symlink_to(f"usr/{d}")
    return got


def backtrace(core, image, tmp, depth=12):
    """gdb's `bt` of the core file @core, its executable and libraries from
    @image (an ext4 image of the guest's root), in @tmp; (text, frames):
    gdb's whole output and [(number, function, object)] of the frames."""
    c = elfcore.parse(Path(core).read_bytes())
    root = Path(tmp) / "sysroot"
    have = sysroot(image, c["files"], root)
    exe = next((f for f in have if f.rsplit("/", 1)[-1] == c["fname"]), None)
    cmd = ["gdb", "-nx", "-batch", "-ex", "set debuginfod enabled off",
           "-ex", f"set sysroot {root}", "-ex", "set auto-load off"]
    if exe:
        cmd += ["-ex", f"file {root}{exe}"]
    cmd += ["-ex", f"core-file {core}", "-ex", f"bt {depth}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    text = p.stdout + p.stderr
    # gdb shows frame #0 once as it loads the core, then again in the bt
    frames = {}
    for n, fn, obj in FRAME.findall(text):
        frames.setdefault(int(n), (int(n), fn, obj))
    return text, list(frames.values())
