#!/usr/bin/env python3
"""Make a copy of a Go binary whose tables lie about one function (stdlib only).

  lie.py entry IN OUT FUNC DELTA   move FUNC's entry in .gopclntab by DELTA bytes
                                   (functab and the _func record's entryoff)
  lie.py size IN OUT FUNC DELTA    grow FUNC's .symtab st_size by DELTA bytes
  lie.py pcsp IN OUT FUNC          move FUNC's first pc-to-SP change point one
                                   byte later (inside the prologue, where the
                                   runtime never unwinds), keeping the table's span
  lie.py byte IN OUT FUNC OLD NEW  overwrite the one byte OLD in FUNC's code
                                   (up to the next function) with NEW: e.g. its
                                   one inline mark, 0x90 -> 0x50
  lie.py show IN FUNC              print FUNC's entry and pc-to-SP runs

Go 1.18+ tables (magic 0xfffffff0 or 0xfffffff1), 64-bit little-endian ELF.
Every change is printed on stdout as one line.
"""
import shutil
import struct
import sys


def die(msg):
    sys.stderr.write("lie.py: %s\n" % msg)
    sys.exit(1)


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = []
    for i in range(shnum):
        name, typ, flags, addr, off, size, link, info, align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        hdrs.append(dict(name=name, type=typ, addr=addr, off=off, size=size, link=link,
                         entsize=entsize))
    strtab = hdrs[shstrndx]
    out = {}
    for h in hdrs:
        end = data.index(b"\0", strtab["off"] + h["name"])
        h["sname"] = data[strtab["off"] + h["name"]:end].decode()
        out[h["sname"]] = h
    return out, hdrs


def varint(data, pos):
    v, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


class Pcln:
    def __init__(self, data):
        secs, _ = sections(data)
        if ".gopclntab" not in secs:
            die("no .gopclntab section")
        self.base = secs[".gopclntab"]["off"]
        b = self.base
        magic, = struct.unpack_from("<I", data, b)
        if magic not in (0xFFFFFFF0, 0xFFFFFFF1):
            die("unsupported .gopclntab magic 0x%x" % magic)
        self.quantum = data[b + 6]
        (self.nfunc, _, self.text, self.names, _, _, self.pctab,
         self.pcln) = struct.unpack_from("<8Q", data, b + 8)
        self.data = data

    def functab(self, i):
        return self.base + self.pcln + 8 * i

    def func(self, name):
        for i in range(self.nfunc):
            entryoff, funcoff = struct.unpack_from("<II", self.data, self.functab(i))
            rec = self.base + self.pcln + funcoff
            nameoff, = struct.unpack_from("<i", self.data, rec + 4)
            at = self.base + self.names + nameoff
            end = self.data.index(b"\0", at)
            if self.data[at:end].decode() == name:
                return i, rec, entryoff
        die("no function %s in .gopclntab" % name)

    def pcsp(self, rec):
        off, = struct.unpack_from("<I", self.data, rec + 16)
        return self.base + self.pctab + off

    def runs(self, rec):
        """[(value, pcdelta, pos_of_pcdelta, len_of_pcdelta)]"""
        pos, val, first, out = self.pcsp(rec), -1, True, []
        while True:
            uv, npos = varint(self.data, pos)
            if uv == 0 and not first:
                return out
            first = False
            val += -(uv >> 1) - 1 if uv & 1 else uv >> 1
            pd, end = varint(self.data, npos)
            out.append((val, pd * self.quantum, npos, end - npos))
            pos = end


def lie_entry(data, name, delta):
    t = Pcln(data)
    i, rec, entryoff = t.func(name)
    struct.pack_into("<I", data, t.functab(i), entryoff + delta)
    struct.pack_into("<I", data, rec, entryoff + delta)
    print("%s: .gopclntab entry 0x%x -> 0x%x" % (name, t.text + entryoff,
                                                  t.text + entryoff + delta))


def lie_size(data, name, delta):
    secs, hdrs = sections(data)
    if ".symtab" not in secs:
        die("no .symtab: use an unstripped binary")
    sym = secs[".symtab"]
    strtab = hdrs[sym["link"]]
    for k in range(sym["size"] // 24):
        at = sym["off"] + 24 * k
        nm, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", data, at)
        end = data.index(b"\0", strtab["off"] + nm)
        if data[strtab["off"] + nm:end].decode() == name and info & 0xF == 2:
            struct.pack_into("<Q", data, at + 16, size + delta)
            print("%s: .symtab size 0x%x -> 0x%x" % (name, size, size + delta))
            return
    die("no function symbol %s in .symtab" % name)


def lie_pcsp(data, name):
    t = Pcln(data)
    _, rec, _ = t.func(name)
    runs = t.runs(rec)
    if len(runs) < 2 or runs[1][1] < 2 * t.quantum:
        die("%s: pc-to-SP table too short to move a change point" % name)
    (v0, d0, p0, l0), (v1, d1, p1, l1) = runs[0], runs[1]
    # Same varint lengths: a single byte each, moved by one quantum.
    if l0 != 1 or l1 != 1 or d0 // t.quantum + 1 > 0x7F:
        die("%s: pc deltas are not single-byte varints" % name)
    data[p0] = d0 // t.quantum + 1
    data[p1] = d1 // t.quantum - 1
    print("%s: pc-to-SP change point +0x%x -> +0x%x" % (name, d0, d0 + t.quantum))


def file_offset(data, vaddr):
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for k in range(phnum):
        typ, _, off, va, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + k * phentsize)
        if typ == 1 and va <= vaddr < va + filesz:
            return vaddr - va + off
    die("address 0x%x is in no loaded segment" % vaddr)


def lie_byte(data, name, old, new):
    t = Pcln(data)
    i, _, entryoff = t.func(name)
    next_off, = struct.unpack_from("<I", data, t.functab(i + 1))
    start = file_offset(data, t.text + entryoff)
    at = [k for k in range(start, start + next_off - entryoff) if data[k] == old]
    if len(at) != 1:
        die("%s: %d bytes 0x%02x in its code, expected one" % (name, len(at), old))
    data[at[0]] = new
    print("%s: byte +0x%x 0x%02x -> 0x%02x" % (name, at[0] - start, old, new))


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "show":
        data = bytearray(open(sys.argv[2], "rb").read())
        t = Pcln(data)
        _, rec, entryoff = t.func(sys.argv[3])
        print("entry 0x%x" % (t.text + entryoff))
        pc = 0
        for v, d, _, _ in t.runs(rec):
            print("  +0x%x..+0x%x sp %d" % (pc, pc + d, v))
            pc += d
        return
    if len(sys.argv) < 5:
        die("usage: lie.py entry|size|pcsp|byte IN OUT FUNC [DELTA | OLD NEW]")
    kind, src, dst, name = sys.argv[1:5]
    data = bytearray(open(src, "rb").read())
    if kind == "entry":
        lie_entry(data, name, int(sys.argv[5], 0))
    elif kind == "size":
        lie_size(data, name, int(sys.argv[5], 0))
    elif kind == "pcsp":
        lie_pcsp(data, name)
    elif kind == "byte":
        lie_byte(data, name, int(sys.argv[5], 0), int(sys.argv[6], 0))
    else:
        die("unknown lie %s" % kind)
    shutil.copy(src, dst)  # mode bits
    open(dst, "wb").write(data)


if __name__ == "__main__":
    main()
