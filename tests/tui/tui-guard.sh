#!/bin/sh
# The dashboard's guardrails: the header shows the time left before
# auto-detach (--max-duration 4), '+' adds another period, and once time is
# up the row says "detached: --max-duration ..." and the header "TIME UP";
# the live table's header states the memory (bpf maps + retop).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop
need_fixture payments-default

start_fixture payments-default -loop
kill -USR1 "$FIXTURE_PID"
tui_start 120 24 -p "$FIXTURE_PID" -d 0.3 -t main.ProcessPayment --max-duration 4
expect_screen 'detach in 0:0[1-4] \(\+ extends\)' 15 "the time left in the header"
expect_screen 'mem bpf [0-9.]+ MiB \+ [0-9.]+ MiB' 5 "the memory in the live table's header"
keys +
expect_screen 'detach in 0:0[5-8] \(\+ extends\)' 5 "'+' adds another 4 s"
expect_screen 'TIME UP: detached' 15 "time up in the header"
expect_screen '^main\.ProcessPayment .*detached: --max-duration 4 s reached' 5 "the row says why it was detached"
quit_ok 20
exit 0
