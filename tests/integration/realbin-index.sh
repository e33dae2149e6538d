#!/bin/sh
# retop's function index of real Go binaries built by others (from the npm
# registry: esbuild on Go 1.20.4, 1.20.12 and 1.26.5; lefthook on Go 1.27.0;
# buf on Go 1.27.3; all stripped, so the pclntab is the only table) against
# Go's own debug/gosym and objdump, on every function: names and entries,
# file offsets, sizes, file:line, RET sites equal to objdump's RET
# instructions, and every function without RET sites given a reason
# (gosym-oracle check).  Every binary is checked before the test fails; the
# failure sorts the mismatches into wrong facts and functions refused because
# the decoder cannot read them (tests/realbin/sort-mismatches.py).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../realbin/lib.sh
. "$abs_top_srcdir/tests/realbin/lib.sh"
need_cmd objdump
need_cmd python3
need_retop
realbin_oracle

failed=""
for name in esbuild-0.17.19 esbuild-0.21.5 esbuild-0.28.2 lefthook-2.2.2 buf-1.75.0; do
    realbin_fetch "$name"
    if "$RETOP" -l -x "$BIN" -o json >"$T/$name.json" 2>"$T/$name.err"; then rc=0; else rc=$?; fi
    if [ "$rc" -ne 0 ]; then
        echo "FAIL: $name: retop -l -x $BIN -o json exited $rc: $(head -n 3 "$T/$name.err")" >&2
        failed="$failed $name"
        continue
    fi
    # Listing may warn, never about these binaries' own tables.
    if [ -s "$T/$name.err" ]; then
        echo "FAIL: $name: retop -l warned: $(head -n 3 "$T/$name.err")" >&2
        failed="$failed $name"
    fi
    # Every mismatch printed, then sorted: a wrong fact (entry, name, offset,
    # size, line, RET site) against an honest refusal of a function whose
    # code the decoder cannot read.  Both fail the test, with their own line.
    if GOSYM_ORACLE_DETAIL=1000000 "$ORACLE127" check "$BIN" "$T/$name.json" >"$T/$name.check" 2>&1; then
        echo "$name: $(head -n 1 "$T/$name.check")"
        continue
    fi
    failed="$failed $name"
    python3 "$REALBIN/sort-mismatches.py" "$T/$name.json" "$T/$name.check" >"$T/$name.sorted" 2>&1 || true
    if ! grep -q '^wrong [0-9]' "$T/$name.sorted"; then
        echo "FAIL: $name: gosym-oracle check failed: $(head -n 3 "$T/$name.check") $(head -n 3 "$T/$name.sorted")" >&2
        continue
    fi
    wrong=$(sed -n 's/^wrong \([0-9]*\)$/\1/p' "$T/$name.sorted")
    refused=$(sed -n 's/^refused \([0-9]*\)$/\1/p' "$T/$name.sorted")
    echo "FAIL: $name: $(head -n 1 "$T/$name.check"): $wrong wrong, $refused refused as undecodable" >&2
    [ "$wrong" -eq 0 ] || {
        echo "  wrong facts (retop against debug/gosym and objdump):" >&2
        grep '^wrong [^0-9]' "$T/$name.sorted" | head -n 10 | sed 's/^wrong /    /' >&2
    }
    [ "$refused" -eq 0 ] || {
        echo "  refused, with RET instructions objdump decodes (the decoder's gaps):" >&2
        grep '^refused [^0-9]' "$T/$name.sorted" | head -n 5 | sed 's/^refused /    /' >&2
    }
done
[ -z "$failed" ] || fail "index of real binaries wrong for:$failed"
exit 0
