#!/bin/sh
# -n N in the dashboard: retop -p PID -t FUNC -n 3 -d 0.3 shows the live
# table and exits by itself after 3 refreshes, with status 0, no key pressed.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop

start_fixture payments-default -loop
kill -USR1 "$FIXTURE_PID"

start=$(date +%s%N)
tui_start 80 24 -p "$FIXTURE_PID" -t main.ProcessPayment -n 3 -d 0.3
# The live table shows up while it runs (unless it is already done).
if ! wait_screen '^main\.ProcessPayment ' 10 && [ ! -e "$T/exit" ]; then
    cat "$SCREEN" >&2
    fail "no live table row for main.ProcessPayment"
fi
st=$(wait_exit 60) || { snap; cat "$SCREEN" >&2; fail "retop -n 3 did not exit by itself"; }
[ "$st" -eq 0 ] || fail "retop -n 3 exited with $st"
# Three refreshes of 0.3 s cannot take less than 0.9 s.
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$elapsed" -ge 900 ] || fail "retop -n 3 -d 0.3 exited after $elapsed ms: too early"
exit 0
