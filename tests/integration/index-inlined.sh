#!/bin/sh
# Inlined calls in retop -l: tests/go/inlined built by Go 1.19 (the go on
# PATH) and, when scripts/go-toolchain can fetch it, 1.27 (the two layouts
# of the inline tree and the newest module data), each default, stripped
# and PIE; RETOP_INLINED_RELEASES=system,1.26,1.27 (or any list) for more.
# For every function of package main, inlined_sites equals the number of
# sites the compiler reports it inlined (go build -gcflags=-m);
# main.(*Acc).Add, which exists only inlined, is its own row, inline-only
# (tests/integration/inlined.py).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_retop
command -v "${GO:-go}" >/dev/null 2>&1 || skip "go not found: install golang-go"

if python3 "$abs_top_srcdir/tests/integration/inlined.py" \
    --out "$abs_top_builddir/tests/go/inlined-bin" --releases "${RETOP_INLINED_RELEASES:-system,1.27}"; then
    rc=0
else
    rc=$?
fi
[ "$rc" -ne 77 ] || skip "no Go toolchain could build tests/go/inlined"
[ "$rc" -eq 0 ] || fail "inlined sites differ from the compiler's (lines above)"
