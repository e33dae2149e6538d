#!/bin/sh
# Patterns and inlining when tracing tests/go/inlined: -t main.Scale -t
# main.NoSuchFunction -t 'main.(*Acc).Add'.  The pattern that names nothing
# is one warning and the others are traced: main.Scale counts exactly its
# 25 calls through a func value (its inlined calls never reach its
# probes, and its snapshot says it is inlined at 3 sites); main.(*Acc).Add, which exists only inlined, is matched by name
# and its status says it has no code of its own and its inlined calls are
# not counted.  Patterns that name nothing at all are still an error (exit
# 1).  -d 0.2: snapshots every 0.2 s, so the test waits less.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture inlined-default
sc() { python3 "$abs_top_srcdir/tests/integration/snapcheck.py" "$@"; }

start_fixture inlined-default -out "$T/out"
fixture=$FIXTURE_PID
"$RETOP" -b -p "$fixture" -t main.Scale -t main.NoSuchFunction -t 'main.(*Acc).Add' -d 0.2 \
    -o json >"$T/snap" 2>"$T/err" &
rp=$!
track_pid "$rp"
sc wait "$T/snap" 1 15 "$rp" || fail "retop did not attach: $(head -n 3 "$T/err")"
kill -USR1 "$fixture"
wait_file "$T/out" 20 || fail "no result from the fixture in 20 s (did it crash?)"
sc wait "$T/snap" $(($(sc lines "$T/snap") + 1)) 5 "$rp" || fail "retop stopped: $(head -n 3 "$T/err")"
kill -INT "$rp"
if wait "$rp"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "retop exited $rc after SIGINT: $(head -n 3 "$T/err")"

[ "$(grep -c "no function matches 'main.NoSuchFunction'" "$T/err")" -eq 1 ] ||
    fail "expected one warning for main.NoSuchFunction: $(cat "$T/err")"
grep -q "main.(\*Acc).Add: exists only inlined (3 sites)" "$T/err" ||
    fail "expected a line saying main.(*Acc).Add exists only inlined: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" -eq 2 ] || fail "expected two lines on stderr: $(cat "$T/err")"
sc exact "$T/snap" "$T/out" main.Scale || fail "main.Scale's calls through a func value"
[ "$(sc get "$T/snap" main.Scale inlined_sites)" = 3 ] ||
    fail "main.Scale's snapshot says inlined_sites $(sc get "$T/snap" main.Scale inlined_sites), expected 3"
sc status "$T/snap" "error: main.(*Acc).Add: exists only inlined (3 sites): no code of its own" \
    'main.(*Acc).Add' || fail "main.(*Acc).Add's status"

# A glob picks functions with code only: main.(*Acc).Add is not among
# main.*'s (it is named exactly above).
"$RETOP" -b -p "$fixture" -t 'main.*' -n 1 -d 0.2 -o json >"$T/glob" 2>"$T/err3" ||
    fail "retop -t 'main.*' failed: $(head -n 3 "$T/err3")"
! grep -q 'Acc' "$T/glob" || fail "the glob main.* picked main.(*Acc).Add, which has no code"
sc status "$T/glob" tracing main.Scale || fail "main.* does not trace main.Scale"

# Nothing named at all: an error, as before.
if "$RETOP" -b -p "$fixture" -t main.NoSuchFunction -t main.NorThis -n 1 >/dev/null 2>"$T/err2"; then
    rc=0
else
    rc=$?
fi
[ "$rc" -eq 1 ] || fail "retop exited $rc when no pattern matched, expected 1: $(cat "$T/err2")"
grep -q "no pattern matches a function: no function matches 'main.NoSuchFunction'" "$T/err2" ||
    fail "the error does not say no pattern matched: $(cat "$T/err2")"
echo "inlined: main.Scale $(sc get "$T/snap" main.Scale calls) calls out of line (fixture: 25), main.NoSuchFunction one warning, main.(*Acc).Add inline-only, all-unmatched exit 1"
