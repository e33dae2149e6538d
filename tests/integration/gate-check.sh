#!/bin/sh
# The estimate's gate in BPF: a call and its restart (an entry probe on a
# first instruction, hit twice at the same depth) count once in a sampled
# slice, nothing outside one, and a slice with a cap wakes the engine once,
# at the call that reaches it, and nothing begun after the entry's window
# closed counts; on retop's entry program attached to a
# function of the test itself (tests/integration/gate-check.c).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
check=$abs_top_builddir/tests/integration/gate-check
[ -x "$check" ] || fail "$check not found: run make check"
if "$check" >"$T/out" 2>"$T/err"; then rc=0; else rc=$?; fi
[ "$rc" -ne 77 ] || skip "cannot load the BPF programs: $(cat "$T/out")"
[ "$rc" -eq 0 ] || fail "$(cat "$T/out" "$T/err")"
cat "$T/out"
