#!/bin/sh
# make check driver for the libFuzzer targets.
#
# Runs each fuzzer built in $abs_top_builddir/tests/fuzz over its seed corpus
# $abs_top_srcdir/tests/fuzz/corpus/<name without fuzz_>/ for a bounded time
# (RETOP_FUZZ_SECONDS, default 15; 0 replays the corpus once and stops).
# New inputs go to a temp dir, never to the source tree.  Any crash, leak,
# sanitizer report or timeout fails the test (libFuzzer's exit code); the
# reproducer is kept as $abs_top_builddir/tests/fuzz/<name>-crash-*.
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${abs_top_srcdir:-$(cd "$here/../.." && pwd)}
builddir=${abs_top_builddir:-$srcdir}
seconds=${RETOP_FUZZ_SECONDS:-15}
fuzzers="fuzz_gopclntab fuzz_elf_index fuzz_sdk_json"

if [ -f "$srcdir/tests/lib.sh" ]; then
    . "$srcdir/tests/lib.sh"
fi
# Without tests/lib.sh: the automake exit code for a skipped test.
command -v skip >/dev/null 2>&1 || skip() { echo "SKIP: $*"; exit 77; }

case $seconds in
'' | *[!0-9]*) echo "run-fuzzers: RETOP_FUZZ_SECONDS=$seconds is not a number" >&2; exit 99 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/retop-fuzz.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# UB is a finding, not a warning; leaks are checked by default.
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export UBSAN_OPTIONS

failed=0 missing=
for name in $fuzzers; do
    bin=$builddir/tests/fuzz/$name
    corpus=$srcdir/tests/fuzz/corpus/${name#fuzz_}
    if [ ! -x "$bin" ]; then
        missing="$missing $name"
        continue
    fi
    if [ ! -d "$corpus" ]; then
        echo "FAIL $name: no seed corpus $corpus" >&2
        failed=1
        continue
    fi
    mkdir -p "$work/$name"
    if [ "$seconds" -eq 0 ]; then
        limit=-runs=0 # libFuzzer reads max_total_time=0 as "forever"
    else
        limit=-max_total_time=$seconds
    fi
    log=$work/$name.log
    start=$(date +%s)
    "$bin" "$limit" -max_len=65536 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$builddir/tests/fuzz/$name-" \
        "$work/$name" "$corpus" >"$log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if [ $rc -ne 0 ]; then
        echo "FAIL $name: exit $rc after ${execs:-?} execs in ${took}s; its output:" >&2
        grep -v '^#[0-9]' "$log" | tail -n 60 >&2
        failed=1
        continue
    fi
    echo "PASS $name: ${execs:-?} execs in ${took}s over $(ls "$corpus" | wc -l) seeds"
done

[ $failed -eq 0 ] || exit 1
case $missing in
'') exit 0 ;;
' '*' '*) skip "fuzzers$missing not built (install libclang-rt-14-dev)" ;;
*) skip "fuzzer$missing not built (install libclang-rt-14-dev)" ;;
esac
