"""Small ELF cores for the host tests, laid out as the kernel writes one:
the ELF header, its program headers, one PT_NOTE and the PT_LOAD
segments' bytes after it."""

import struct

NT_PRSTATUS, NT_PRPSINFO, NT_SIGINFO = 1, 3, 0x53494749


def note(ntype, desc):
    """One "CORE" note of type @ntype, its desc padded to 4 bytes."""
    return struct.pack("<III", 5, len(desc), ntype) + b"CORE\0\0\0\0" + desc + \
        b"\0" * (-len(desc) % 4)


def core(notes, loads=()):
    """An x86-64 ELF core with one PT_NOTE holding @notes [(type, desc)]
    and a PT_LOAD of each of @loads [(vaddr, bytes)], in that order."""
    body = b"".join(note(t, d) for t, d in notes)
    phoff, phnum = 64, 1 + len(loads)
    off = phoff + 56 * phnum
    head = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack(
        "<HHIQQQIHHHHHH", 4, 62, 1, 0, phoff, 0, 0, 64, 56, phnum, 0, 0, 0)
    ph = struct.pack("<IIQQQQQQ", 4, 0, off, 0, 0, len(body), 0, 0)
    off += len(body)
    for vaddr, data in loads:
        ph += struct.pack("<IIQQQQQQ", 1, 5, off, vaddr, 0, len(data), len(data), 4096)
        off += len(data)
    return head + ph + body + b"".join(data for _, data in loads)


def crash_notes(fname, signo, pid):
    """NT_PRSTATUS (the signal, the pid), NT_PRPSINFO (the command name)
    and NT_SIGINFO (the signal) of a process killed by @signo."""
    prstatus = bytearray(336)
    struct.pack_into("<h", prstatus, 12, signo)
    struct.pack_into("<i", prstatus, 32, pid)
    prpsinfo = bytearray(136)
    prpsinfo[40:40 + len(fname)] = fname
    siginfo = struct.pack("<i", signo) + bytes(124)
    return [(NT_PRSTATUS, bytes(prstatus)), (NT_PRPSINFO, bytes(prpsinfo)),
            (NT_SIGINFO, siginfo)]
