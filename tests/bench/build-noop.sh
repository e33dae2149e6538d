#!/bin/sh
# Usage: build-noop.sh OUTDIR: build the no-op uprobe loader noop_probe
# (noop_probe.bpf.c + its libbpf skeleton + noop_probe.c) into OUTDIR.
# Rebuilt only when a source is newer than OUTDIR/noop_probe.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
if [ -x "$out/noop_probe" ] &&
    [ -z "$(find "$here/noop_probe.bpf.c" "$here/noop_probe.c" "$here/build-noop.sh" \
        -newer "$out/noop_probe" -print)" ]; then
    exit 0
fi
CC=${CC:-cc}
CLANG=${CLANG:-clang}
BPFTOOL=${BPFTOOL:-bpftool}
"$CLANG" -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall \
    -I"/usr/include/$("$CC" -dumpmachine)" \
    -c "$here/noop_probe.bpf.c" -o "$out/noop_probe.bpf.o"
"$BPFTOOL" gen skeleton "$out/noop_probe.bpf.o" name noop_probe_bpf >"$out/noop_probe.skel.h.$$"
mv -f "$out/noop_probe.skel.h.$$" "$out/noop_probe.skel.h"
"$CC" -O2 -Wall -Wextra -I"$out" "$here/noop_probe.c" -o "$out/noop_probe.$$" -lbpf -lelf -lz
mv -f "$out/noop_probe.$$" "$out/noop_probe"
