#!/bin/sh
# The dashboard's baseline, as an operator uses it: no CHANGE column until
# B is pressed; then each traced function's p50/p99 against the calls
# before.  The change fixture's main.Slower (100 us) and main.Steady
# (150 us) run steadily; B marks the baseline, then SIGUSR1 doubles
# main.Slower: its CHANGE reads about +100% (significant: shown in the
# warning colour), main.Steady's '~'.  Enter shows the same on the detail
# view's line, as the batch text says it.  At 80 columns, the defaults.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop
need_fixture change-default

start_fixture change-default
# By name: main.Slower first, main.Steady second.
tui_start 80 24 -p "$FIXTURE_PID" -d 0.5 --sort name -t "'main.S*'"
expect_screen '^main\.Slower +[0-9]' 20 "main.Slower traced"
expect_screen '^main\.Steady +[0-9]' 5 "main.Steady traced"
grep -q 'CHANGE' "$SCREEN" && { cat "$SCREEN" >&2; fail "a CHANGE column before any baseline"; }
sleep 2
keys B
expect_screen '^FUNCTION.*P99 +CHANGE ' 5 "the CHANGE column once B was pressed"
expect_screen 'baseline marked' 5 "B says what it did"
kill -USR1 "$FIXTURE_PID"
# main.Slower's calls since: twice as long, flagged once most are.
expect_screen '^main\.Slower .* \+(9[0-9]|10[0-9])%/' 20 "main.Slower about +100% against the baseline"
expect_screen '^main\.Steady .* ~ ' 5 "main.Steady not significant"
# The cursor on main.Steady: main.Slower's row, not selected, has its
# CHANGE in a colour (an unselected row has none).
keys Down
sleep 0.6
snap_escapes
grep 'main\.Slower' "$SCREEN.e" | grep -q "$(printf '\033')\\[" ||
    fail "main.Slower's significant change is not coloured: $(grep 'main\.Slower' "$SCREEN.e")"
# The detail view says the same in words.
keys Up
keys Enter
expect_screen '^Change vs baseline: p50 \+(9[0-9]|10[0-9])% ' 10 "main.Slower's detail view"
keys q
st=$(wait_exit 30) || fail "retop did not exit after q"
[ "$st" -eq 0 ] || fail "retop exited $st after q"
echo "tui-baseline: CHANGE appears with B; main.Slower flagged about +100%, main.Steady ~"
