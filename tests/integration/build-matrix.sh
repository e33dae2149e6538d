#!/bin/sh
# The build matrix's default cells: Go 1.19, 1.22, 1.26 and 1.27, each as a
# stripped cgo build linked externally and as a stripped PIE.  Every cell:
# every listed entry equals the unstripped twin's symbol, every RET site of a
# "full" function is one of objdump's, and 1000 calls of main.Work traced
# give exactly 1000 and the program's own mean within 5% (tests/integration/
# matrix.py; the whole matrix is scripts/test-matrix).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd objdump
need_cmd nm
need_cmd gcc
need_retop

if python3 "$abs_top_srcdir/tests/integration/matrix.py" \
    --out "$abs_top_builddir/tests/go/matrix-bin" \
    --releases 1.19,1.22,1.26,1.27 --modes ext-stripped,pie-stripped; then
    rc=0
else
    rc=$?
fi
[ "$rc" -ne 77 ] || skip "no Go toolchain could be fetched (scripts/go-toolchain)"
[ "$rc" -eq 0 ] || fail "a cell of the build matrix is wrong (lines above)"
