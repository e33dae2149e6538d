#!/bin/sh
# A function with no RET instruction (main.Forever, an endless select loop)
# can only be traced at its entry: retop says so in its status and still
# traces the normal function next to it (main.Tick, called every 10 ms).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture noret-default

snap=$T/snap
start_fixture noret-default
fixture=$FIXTURE_PID
retop_batch "$snap" -p "$fixture" -t main.Forever -t main.Tick -d 0.2
# The first snapshot is at attach; two more are 0.4 s of 10 ms ticks.
retop_snapshots 2
retop_stop "$fixture"

sc status "$snap" "entry-only: no RET" main.Forever ||
    fail "noret: retop -b -p PID -t main.Forever -t main.Tick: main.Forever is not entry-only"
sc status "$snap" tracing main.Tick || fail "noret: main.Tick is not traced"
ticks=$(sc get "$snap" main.Tick calls)
[ "$ticks" -gt 0 ] || fail "main.Tick: no call counted in $(sc lines "$snap") snapshots 0.2 s apart"
echo "noret-default: main.Forever '$(sc get "$snap" main.Forever status)', main.Tick tracing, $ticks calls in $(sc lines "$snap") snapshots"

# Text mode: the entry-only reason goes under its row, so every line of the
# batch text fits an 80-column terminal.
"$RETOP" -b -p "$fixture" -t main.Forever -t main.Tick -d 0.2 -n 2 >"$T/text" 2>"$T/err" ||
    fail "retop -b (text) failed: $(head -n 3 "$T/err")"
grep -Eq '^main\.Forever +0 ' "$T/text" || fail "no main.Forever row in: $(cat "$T/text")"
grep -Eq '^    entry-only: no RET' "$T/text" || fail "no entry-only reason line in: $(cat "$T/text")"
wide=$(awk 'length > 80 { print length ": " $0 }' "$T/text")
[ -z "$wide" ] || fail "batch text lines wider than 80 columns: $wide"
