#!/bin/sh
# The dashboard draws a frame only when something changed: idle, that is
# the header's clock once a second; keys that do nothing draw nothing.
# retop -v says on exit how many frames it drew.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tmux.sh
. "$(dirname "$0")/tmux.sh"
need_root
need_retop

start_fixture payments-default -loop
kill -USR1 "$FIXTURE_PID"
tui_start 80 24 -p "$FIXTURE_PID" -v "2>$T/err"
expect_screen '^Functions: [0-9]+' 20 "browser opens"
t0=$(date +%s.%N)
sleep 3
# 40 keys no screen binds: each wakes the loop, none may draw.
i=0
while [ "$i" -lt 40 ]; do
    keys z
    i=$((i + 1))
done
sleep 2
keys q
st=$(wait_exit 30) || fail "retop did not exit after q"
t1=$(date +%s.%N)
[ "$st" -eq 0 ] || fail "retop exited $st after q: $(cat "$T/err")"
frames=$(sed -n 's/^retop: ui: \([0-9]*\) frames drawn in .*/\1/p' "$T/err")
[ -n "$frames" ] || fail "retop -v did not report its frames: $(cat "$T/err")"
# Since start: one per second of the clock, the first frames while the
# browser opened, q's own.
max=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", b - a + 1 + 6 }')
[ "$frames" -le "$max" ] || fail "$frames frames drawn in about $max s (40 idle keys must draw none)"
echo "tui-redraw: $frames frames, at most $max allowed, with 40 keys that change nothing"
