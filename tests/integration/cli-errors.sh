#!/bin/sh
# Usage errors are one line on stderr and exit 2: an option missing its
# argument says so (for --serve too, not "unknown option"), and two modes
# given together are refused instead of one being silently ignored.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_retop

# usage_case WANT-ERE ARGS...: exit 2, exactly one stderr line matching.
usage_case() {
    pat=$1
    shift
    expect_exit 2 "$RETOP" "$@"
    [ "$(wc -l <"$T/err")" -eq 1 ] || fail "retop $*: want one line on stderr, got: $(cat "$T/err")"
    grep -Eq -- "^retop: $pat" "$T/err" || fail "retop $*: '$(cat "$T/err")' does not match '$pat'"
    [ ! -s "$T/out" ] || fail "retop $*: wrote to stdout: $(head -n 2 "$T/out")"
}

usage_case "--serve needs an address: --serve PORT or --serve HOST:PORT" --serve
usage_case "--serve needs an address" -p 1 -t main.x --serve
usage_case "--orphan-timeout needs an argument" --orphan-timeout
usage_case "-p needs an argument" -p
usage_case "unknown option '--bogus'" --bogus
usage_case "-b/--batch and --serve cannot be combined: choose one mode" -b --serve 9100 -p 1 -t x
usage_case "--serve and -b/--batch cannot be combined" --serve 127.0.0.1:9100 -b -p 1 -t x
usage_case "-l/--list and -b/--batch cannot be combined" -l -b -p 1
usage_case "-b/--batch and -l/--list cannot be combined" -b -l main.x -p 1
usage_case "--serve and -l/--list cannot be combined" --serve 9100 --list -p 1
# The same mode twice is not a conflict: it reaches the next check.
usage_case "batch mode needs at least one -t PATTERN" -b -b -p 1
# --slow takes a duration with a unit (a bare number is seconds).
for bad in 10xs 0 -5ms 2h abc 1e400ms; do
    usage_case "--slow takes a duration from 1ns to 1h such as 10ms, 500us or 2s, got '$bad'" \
        -b -p 1 -t x --slow "$bad"
done
usage_case "--slow needs an argument" -b -p 1 -t x --slow
usage_case "--latency-only keeps no slowest calls: leave out --slow" -b -p 1 -t x --latency-only --slow 10ms
usage_case "--latency-only keeps no slowest calls: leave out --args" -b -p 1 -t x --latency-only --args 'main.*'
# --sort names a column; --top and --idle shape the batch text alone (JSON
# keeps every function).
usage_case "--sort takes one of name, calls, calls/s, p50, p99, err%, max, inflight, oldest, orphans, unmatched, dropped \(-KEY: lowest first\), got 'errs'" \
    -b -p 1 -t x --sort errs
usage_case "--sort needs an argument" -b -p 1 -t x --sort
usage_case "--sort orders batch snapshots and the live table, not --serve" --serve 9100 -p 1 -t x --sort p99
usage_case "--top needs a positive count of rows, got '0'" -b -p 1 -t x --top 0
usage_case "--top shapes the batch text; JSON keeps every function" -b -p 1 -t x -o json --top 5
usage_case "--idle shapes the batch text; JSON keeps every function" -b -p 1 -t x --idle -o json
usage_case "--idle is an option of batch mode \(-b\)" -p 1 --idle
# --baseline: seconds of tracing, in batch mode or the dashboard, before
# tracing stops.
for bad in abc 0 -2 1e9 3x; do
    usage_case "--baseline takes the seconds of tracing to compare with, from 0.1 to 86400, got '$bad'" \
        -b -p 1 -t x --baseline "$bad"
done
usage_case "--baseline needs an argument" -b -p 1 -t x --baseline
usage_case "--baseline compares periods in batch mode and the dashboard, not --serve" --serve 9100 -p 1 -t x --baseline 5
usage_case "--baseline compares periods in batch mode and the dashboard, not -l" -l -p 1 --baseline 5
usage_case "--baseline 600 s leaves nothing to compare: tracing stops at --max-duration 600 s" -b -p 1 -t x --baseline 600
usage_case "--baseline 30 s leaves nothing to compare: tracing stops at --max-duration 20 s" -b -p 1 -t x --max-duration 20 --baseline 30
echo "cli-errors: 37 usage errors, one line each, exit 2"
