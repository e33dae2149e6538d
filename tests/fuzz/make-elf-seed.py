#!/usr/bin/env python3
"""Write the seed corpus of fuzz_elf_index: tiny x86-64 ELF files holding a
synthetic Go function table.

Usage: make-elf-seed.py [OUTDIR]   (default: corpus/elf_index next to this file)

Each seed is a complete, valid input for funcs_load(): an ELF64 x86-64 file
whose .gopclntab (Go 1.18 layout, magic 0xFFFFFFF0; one seed uses 1.20's
0xFFFFFFF1) describes two functions in .text.  The variants reach the other
paths of the loader: symbols, notes, both .go.buildinfo formats, a PIE with
the table in .data.rel.ro.gopclntab, and no section headers at all (the
table is then found by its magic in a read-only segment).  The seeds are
small on purpose: the fuzzer mutates every byte of them.

Also copies the first 4 KB of /bin/true (a truncated real PIE) when present.
"""
import os
import struct
import sys

BASE_EXEC = 0x400000
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOTE = 1, 2, 3, 7
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 1, 2, 4
PF_X, PF_W, PF_R = 1, 2, 4
MAGIC_118, MAGIC_120 = 0xFFFFFFF0, 0xFFFFFFF1

# Two functions, checked with objdump -D -b binary -mi386:x86-64 -M intel.
# main.add at +0x00: two RETs, and 0xC3 bytes inside an immediate.
ADD = bytes.fromhex(
    "488d0437"    # 0x00: lea rax, [rdi + rsi]
    "4885c0"      # 0x04: test rax, rax
    "7401"        # 0x07: je 0xa
    "c3"          # 0x09: ret
    "b8c3c3c3c3"  # 0x0a: mov eax, 0xc3c3c3c3
    "c3"          # 0x0f: ret
).ljust(0x20, b"\xcc")  # int3 padding to the next function
# main.main at +0x20: no RET, a tail jump back to main.add.
MAIN = bytes.fromhex(
    "4883ec08"    # 0x20: sub rsp, 8
    "4883c408"    # 0x24: add rsp, 8
    "e9d3ffffff"  # 0x28: jmp 0x0 (main.add)
).ljust(0x10, b"\xcc")
TEXT = ADD + MAIN
FUNCS = [("main.add", 0x00, 0x20, 10), ("main.main", 0x20, 0x30, 20)]


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def pcvalue(value, size):
    """A pcvalue table: value holds over [entry, entry+size), from -1."""
    d = value + 1
    return uvarint(d << 1 if d >= 0 else ((~d) << 1) | 1) + uvarint(size) + b"\0"


def align(b, a):
    b.extend(b"\0" * (-len(b) % a))


def pclntab(magic, text_start):
    """Header, funcnametab, cutab, filetab, pctab, then functab and _funcs."""
    hdr_size = 8 + 8 * 8
    t = bytearray(hdr_size)
    names = len(t)
    nameoff = []
    for name, *_ in FUNCS:
        nameoff.append(len(t) - names)
        t += name.encode() + b"\0"
    align(t, 4)
    cutab = len(t)
    t += struct.pack("<I", 0)  # one CU, one file at filetab+0
    filetab = len(t)
    t += b"/src/main.go\0"
    pctab = len(t)
    t += b"\0"  # offset 0 means "no table"
    pcfile, pcln = [], []
    for _, start, end, line in FUNCS:
        pcfile.append(len(t) - pctab)
        t += pcvalue(0, end - start)
        pcln.append(len(t) - pctab)
        t += pcvalue(line, end - start)
    align(t, 8)
    pclnoff = len(t)
    nf = len(FUNCS)
    ft = bytearray((2 * nf + 1) * 4)
    for i, (_, start, end, line) in enumerate(FUNCS):
        align(ft, 8)
        struct.pack_into("<II", ft, 8 * i, start, len(ft))
        ft += struct.pack("<IiiIIIIII", start, nameoff[i], 16, 0, 0, pcfile[i], pcln[i], 0, 0)
        if magic == MAGIC_120:
            ft += struct.pack("<i", line)  # startLine
        ft += struct.pack("<I", 0)  # funcID, flag, pad, nfuncdata
    struct.pack_into("<I", ft, 8 * nf, FUNCS[-1][2])
    t += ft
    struct.pack_into("<IBBBB8Q", t, 0, magic, 0, 0, 1, 8, nf, 1, text_start,
                     names, cutab, filetab, pctab, pclnoff)
    return bytes(t)


def note(name, ntype, desc):
    n = name.encode() + b"\0"
    n = n.ljust(-(-len(n) // 4) * 4, b"\0")
    return struct.pack("<III", len(name) + 1, len(desc), ntype) + n + \
        desc.ljust(-(-len(desc) // 4) * 4, b"\0")


def buildinfo_inline(version):
    """Go >= 1.18: flag bit 2, the version inline as a varint-prefixed string."""
    v = version.encode()
    return (b"\xff Go buildinf:" + bytes([8, 2])).ljust(32, b"\0") + \
        uvarint(len(v)) + v + uvarint(0)


def buildinfo_pointers(version, addr):
    """Go < 1.18: two pointers to Go string headers (ptr, len)."""
    v = version.encode()
    hdr = addr + 32  # the version's string header follows the magic block
    data = hdr + 32  # then two headers, then the bytes
    blk = (b"\xff Go buildinf:" + bytes([8, 0])).ljust(16, b"\0")
    blk += struct.pack("<QQ", hdr, hdr + 16)
    blk += struct.pack("<QQQQ", data, len(v), data, 0)
    return blk + v


class Elf:
    """Sections laid out after the headers, each at vaddr = base + offset."""

    def __init__(self, pie=False, nphdr=1):
        self.pie = pie
        self.base = 0 if pie else BASE_EXEC
        self.hdr_end = 64 + 56 * nphdr
        self.body = bytearray(self.hdr_end)
        self.secs = []  # name, type, flags, offset, size, link, info, align, entsize

    def addr(self, off):
        return self.base + off

    def next_addr(self, a):
        return self.addr(len(self.body) + (-len(self.body) % a))

    def add(self, name, stype, flags, data, a=1, link=0, info=0, entsize=0):
        align(self.body, a)
        off = len(self.body)
        self.body += data
        self.secs.append((name, stype, flags, off, len(data), link, info, a, entsize))
        return len(self.secs)  # section index (0 is the null section)

    def sec(self, name):
        return next(s for s in self.secs if s[0] == name)

    def write(self, segs, shdrs=True):
        """segs: (first section, last section, p_flags) of each PT_LOAD."""
        shstr = bytearray(b"\0")
        shnames = []
        for s in self.secs + [(".shstrtab",)]:
            shnames.append(len(shstr))
            shstr += s[0].encode() + b"\0"
        if shdrs:
            self.add(".shstrtab", SHT_STRTAB, 0, bytes(shstr))
            align(self.body, 8)
            shoff = len(self.body)
            self.body += bytes(64)
            for i, (_, st, fl, off, size, link, info, a, es) in enumerate(self.secs):
                addr = self.addr(off) if fl & SHF_ALLOC else 0
                self.body += struct.pack("<IIQQQQIIQQ", shnames[i], st, fl, addr, off, size,
                                         link, info, a, es)
        for i, (first, last, pf) in enumerate(segs):
            lo = 0 if i == 0 else self.sec(first)[3]
            hi = self.sec(last)[3] + self.sec(last)[4]
            struct.pack_into("<IIQQQQQQ", self.body, 64 + 56 * i, 1, pf, lo, self.addr(lo),
                             self.addr(lo), hi - lo, hi - lo, 0x1000)
        struct.pack_into("<4sBBBB8xHHIQQQIHHHHHH", self.body, 0, b"\x7fELF", 2, 1, 1, 0,
                         3 if self.pie else 2, 62, 1, self.addr(self.sec(".text")[3]), 64,
                         shoff if shdrs else 0, 0, 64, 56, len(segs), 64 if shdrs else 0,
                         len(self.secs) + 1 if shdrs else 0, len(self.secs) if shdrs else 0)
        return bytes(self.body)


def add_text_and_table(e, magic=MAGIC_118, pcln_name=".gopclntab"):
    e.add(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, TEXT, 32)
    text = e.addr(e.sec(".text")[3])
    e.add(pcln_name, SHT_PROGBITS, SHF_ALLOC, pclntab(magic, text), 32)
    return text


def seed_min(magic=MAGIC_118):
    e = Elf()
    add_text_and_table(e, magic)
    return e.write([(".text", ".gopclntab", PF_R | PF_X)])


def add_symtab(e, text):
    strtab = b"\0runtime.text\0main.add\0main.main\0"
    syms = bytes(24)  # the null symbol
    for name, (start, end) in (("runtime.text", (0, 0)), ("main.add", (0, 0x10)),
                               ("main.main", (0x20, 0x2d))):
        syms += struct.pack("<IBBHQQ", strtab.index(name.encode() + b"\0"), 0x12, 0, 1,
                            text + start, end - start)
    strndx = len(e.secs) + 2
    e.add(".symtab", SHT_SYMTAB, 0, syms, 8, link=strndx, info=1, entsize=24)
    e.add(".strtab", SHT_STRTAB, 0, strtab)


def seed_full(old_buildinfo=False):
    e = Elf(nphdr=2)
    text = add_text_and_table(e)
    e.add(".note.go.buildid", SHT_NOTE, SHF_ALLOC,
          note("Go", 4, b"abcdefghij/klmnopqrst/uvwxyz0123/456789ABCD"), 4)
    e.add(".note.gnu.build-id", SHT_NOTE, SHF_ALLOC, note("GNU", 3, bytes(range(1, 21))), 4)
    if old_buildinfo:
        info = buildinfo_pointers("go1.17.13", e.next_addr(16))
    else:
        info = buildinfo_inline("go1.18.10")
    e.add(".go.buildinfo", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, info, 16)
    add_symtab(e, text)
    return e.write([(".text", ".text", PF_R | PF_X),
                    (".gopclntab", ".go.buildinfo", PF_R | PF_W)])


def seed_pie():
    e = Elf(pie=True)
    add_text_and_table(e, pcln_name=".data.rel.ro.gopclntab")
    return e.write([(".text", ".data.rel.ro.gopclntab", PF_R | PF_X)])


def seed_no_shdrs():
    e = Elf(nphdr=2)
    add_text_and_table(e)
    return e.write([(".text", ".text", PF_R | PF_X), (".gopclntab", ".gopclntab", PF_R)],
                   shdrs=False)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus", "elf_index")
    os.makedirs(out, exist_ok=True)
    seeds = {
        "go118-min": seed_min(),
        "go120-min": seed_min(MAGIC_120),
        "go118-full": seed_full(),
        "go117-buildinfo": seed_full(old_buildinfo=True),
        "go118-pie": seed_pie(),
        "go118-no-shdrs": seed_no_shdrs(),
    }
    try:
        with open("/bin/true", "rb") as f:
            seeds["bin-true-head4k"] = f.read(4096)
    except OSError:
        pass
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
