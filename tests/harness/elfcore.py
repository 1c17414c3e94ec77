"""A small, independent reader of ELF core files, to check what the guest's
corecheck says from the host side."""

import struct

ET_CORE = 4
PT_LOAD, PT_NOTE = 1, 4
NT_PRSTATUS, NT_PRPSINFO, NT_AUXV, NT_SIGINFO, NT_FILE = 1, 3, 6, 0x53494749, 0x46494c45


def _cstr(b):
    return b.split(b"\0", 1)[0].decode("latin-1")


def _file_note(desc):
    """NT_FILE: count, page size, count x (start, end, offset), then count
    NUL-terminated paths."""
    count = struct.unpack_from("<Q", desc)[0]
    if 16 + 24 * count > len(desc):
        raise ValueError("NT_FILE note cut short")
    # each path ends in a NUL: count of them, then whatever pads the note
    names = desc[16 + 24 * count:].split(b"\0")
    if len(names) < count + 1:
        raise ValueError("NT_FILE note cut short")
    return list(dict.fromkeys(n.decode("latin-1") for n in names[:count]))


def parse(data):
    """Return {'type', 'machine', 'loads', 'load_bytes', 'notes': {type: count},
    'pid', 'signal', 'fname', 'psargs', 'si_signo', 'segments': [(p_type,
    p_offset, p_filesz)], 'files': [path]}: fname and psargs from
    NT_PRPSINFO (the program's name and command line as the kernel kept
    them), si_signo from NT_SIGINFO, each None when the note is absent;
    files: the mapped files' paths from NT_FILE, each once, in the note's
    order (the crashed process's own strings, as the kernel kept them);
    raise ValueError for anything that is not a whole core."""
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    if data[4] != 2:
        raise ValueError("not ELF64")
    (e_type, e_machine, _ver, _entry, e_phoff, _shoff, _flags, _ehsize,
     e_phentsize, e_phnum) = struct.unpack_from("<HHIQQQIHHH", data, 16)
    if e_type != ET_CORE:
        raise ValueError(f"e_type {e_type} is not ET_CORE")
    out = {"type": e_type, "machine": e_machine, "loads": 0, "load_bytes": 0,
           "notes": {}, "pid": None, "signal": None, "fname": None, "psargs": None,
           "si_signo": None, "segments": [], "files": []}
    for i in range(e_phnum):
        p_type, _flags, p_offset, _vaddr, _paddr, p_filesz, _memsz, _align = \
            struct.unpack_from("<IIQQQQQQ", data, e_phoff + i * e_phentsize)
        if p_offset + p_filesz > len(data):
            raise ValueError(f"segment {i} runs past the end of the file")
        out["segments"].append((p_type, p_offset, p_filesz))
        if p_type == PT_LOAD:
            out["loads"] += 1
            out["load_bytes"] += p_filesz
        elif p_type == PT_NOTE:
            off, end = p_offset, p_offset + p_filesz
            while off + 12 <= end:
                namesz, descsz, ntype = struct.unpack_from("<III", data, off)
                desc = off + 12 + ((namesz + 3) & ~3)
                out["notes"][ntype] = out["notes"].get(ntype, 0) + 1
                if ntype == NT_PRSTATUS and out["pid"] is None:
                    # struct elf_prstatus: elf_siginfo (12), short pr_cursig,
                    # pad, 2 x unsigned long, then pid_t pr_pid
                    out["signal"] = struct.unpack_from("<h", data, desc + 12)[0]
                    out["pid"] = struct.unpack_from("<i", data, desc + 32)[0]
                elif ntype == NT_PRPSINFO and descsz >= 136 and out["fname"] is None:
                    # struct elf_prpsinfo (64-bit): char pr_fname[16] at 40,
                    # char pr_psargs[80] at 56, each NUL-padded
                    out["fname"] = _cstr(data[desc + 40:desc + 56])
                    out["psargs"] = _cstr(data[desc + 56:desc + 136])
                elif ntype == NT_SIGINFO and descsz >= 4 and out["si_signo"] is None:
                    out["si_signo"] = struct.unpack_from("<i", data, desc)[0]
                elif ntype == NT_FILE and descsz >= 16 and not out["files"]:
                    out["files"] = _file_note(data[desc:desc + descsz])
                off = desc + ((descsz + 3) & ~3)
    return out
