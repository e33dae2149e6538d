#!/bin/sh
# A binary replaced on disk after retop indexed it (a new file renamed over
# the name, as a package upgrade does) while a process still runs the old
# one: the dashboard opens `retop -x COPY`, the file at COPY is replaced by
# another build, and tracing a function from the browser then attaches to
# the file each verdict approved, never to a path: the old file (its index's
# descriptor) and the new one (indexed and checked anew, one line on the
# screen).  Both processes, the old build's and the new one's, run their
# calls under the probes, give their own correct results and exit 0.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop
need_fixture payments-default
need_fixture payments-noopt

copy=$T/payments
cp "$FIXTURES/payments-default" "$copy"
rm -f "$T/ready"
"$copy" -ready "$T/ready" &
old=$!
track_pid "$old"
wait_file "$T/ready" 10 || fail "the copy did not start"

tui_start 100 30 -x "$copy"
expect_screen '^Functions: [0-9]+' 20 "function browser of $copy"

# An upgrade: a new file renamed over the old name.
cp "$FIXTURES/payments-noopt" "$copy.new"
mv -f "$copy.new" "$copy"

search_for CalculateTotal 'main\.CalculateTotal' 5
keys Space
expect_screen "was replaced \(a deploy\): tracing 1 of 1 functions" 15 "the deploy followed"
expect_screen "^\* main\.CalculateTotal " 10 "main.CalculateTotal marked as traced"
# The new build, from the name: its calls run under the new file's probes.
"$copy" -ready "$T/ready2" -calls 8 -exit -out "$T/new.out" &
new=$!
track_pid "$new"
wait_file "$T/ready2" 10 || fail "the new build did not start"
kill -USR1 "$new" "$old"
if wait "$new"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "the process running the new build exited $rc under tracing"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["calls"] != 8)' "$T/new.out" ||
    fail "the new build's own result: $(cat "$T/new.out")"
quit_ok 60
kill -0 "$old" || fail "the process running the old build died"
kill -TERM "$old"
if wait "$old"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "the process running the old build exited $rc"
echo "replaced binary: deploy followed ('$(grep -o "was replaced (a deploy)[^|]*" "$SCREEN" | head -n 1 | cut -c1-60)...'); old and new builds ran under the probes and exited 0"
