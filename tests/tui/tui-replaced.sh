#!/bin/sh
# A binary replaced on disk after retop indexed it is refused: the dashboard
# opens `retop -x COPY` while a process runs COPY, the file at COPY is then
# replaced by another build (a new inode, as a package upgrade does), and
# tracing a function from the browser says the binary changed instead of
# attaching probes at the old binary's offsets to the new one.  The process
# still running the old binary is unharmed: it exits 0 on SIGTERM.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
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
expect_screen "changed on disk since it was indexed" 15 "refusal of the replaced binary"
grep -Eq "main\.CalculateTotal: tracing" "$SCREEN" && fail "main.CalculateTotal traced in a replaced binary"
quit_ok 60
kill -0 "$old" || fail "the process running the old binary died"
kill -TERM "$old"
if wait "$old"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "the process running the old binary exited $rc"
echo "replaced binary: refused ('$(grep -o "[^ ]*changed on disk since it was indexed[^|]*" "$SCREEN" | head -n 1 | cut -c1-60)...'), old process alive, exit 0"
