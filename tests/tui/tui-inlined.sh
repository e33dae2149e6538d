#!/bin/sh
# Inlined calls in the live table: main.(*Acc).Add exists only inlined
# (tests/go/inlined); traced by name, its row counts its 2000 inlined calls
# in CALLS as i2.00k, and q quits cleanly (the dashboard has no row of the
# index for it: the worker must not index one).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop

start_fixture inlined-default -out "$T/result.json"
# tui_start's arguments reach a shell again (tmux): the quotes go with them.
tui_start 120 24 -p "$FIXTURE_PID" -t "'main.(*Acc).Add'" -t main.Scale -d 0.3
expect_screen '^main\.\(\*Acc\)\.Add +i0 ' 20 "the inline-only row before the calls"
kill -USR1 "$FIXTURE_PID"
wait_file "$T/result.json" 30 || fail "the fixture did not finish its calls"
expect_screen '^main\.\(\*Acc\)\.Add +i2\.00k ' 10 "2000 inlined calls as i2.00k"
expect_screen '^main\.Scale +25 ' 10 "main.Scale's 25 calls out of line"
quit_ok 30
echo "tui-inlined: main.(*Acc).Add shows i2.00k, q exits 0"
