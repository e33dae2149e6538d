#!/bin/sh
# When the traced process exits, the live table keeps its last numbers
# under an "exited" banner (the final count is the program's own), and Esc
# goes back to the process picker; q then quits cleanly.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop
need_cmd python3

start_fixture payments-default -calls 40 -out "$T/result.json"
tui_start 100 24 -p "$FIXTURE_PID" -t main.ProcessPayment -t main.ValidateCard -d 0.3
expect_screen '^main\.ProcessPayment +' 20 "live table"
# Attached with its RETs: the RETS column holds hits per site ("0/0").
expect_screen '^main\.ProcessPayment +.* [0-9]+/[0-9]+( |$)' 20 "attached"
kill -USR1 "$FIXTURE_PID"
wait_file "$T/result.json" 30 || fail "the fixture did not finish its calls"
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_func"]["main.ProcessPayment"]["calls"])' "$T/result.json")
kill -TERM "$FIXTURE_PID"

expect_screen 'TARGET EXITED' 10 "exited banner"
expect_screen "PID $FIXTURE_PID exited" 5 "exit on the status line"
# shellcheck disable=SC2046 # the row's fields, split on purpose
set -- $(row main.ProcessPayment)
[ "${1:-}" = "$want" ] || fail "after the exit main.ProcessPayment shows '${1:-}' calls, the program made $want: $(cat "$SCREEN")"
case ${3:-} in *ms) ;; *) fail "after the exit p50 of main.ProcessPayment is '${3:-}', want milliseconds" ;; esac
# Still there a few refreshes later.
sleep 1
snap
# shellcheck disable=SC2046
set -- $(row main.ProcessPayment)
[ "${1:-}" = "$want" ] || fail "the last numbers did not stay: '${1:-}' calls a second later"

keys Escape
expect_screen '^Go processes: ' 10 "Esc goes to the picker after the exit"
grep -q 'TARGET EXITED' "$SCREEN" && fail "the banner outlived the session"
quit_ok 30
echo "tui-exit: $want calls kept under the exited banner; Esc to the picker"
