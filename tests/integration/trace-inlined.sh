#!/bin/sh
# Patterns and inlining when tracing tests/go/inlined: -t main.Scale -t
# main.NoSuchFunction -t 'main.(*Acc).Add'.  The pattern that names nothing
# is one warning and the others are traced: main.Scale counts exactly its
# 25 calls through a func value, and its 2000 inlined calls at the inline
# marks of its 3 sites (src/inline_marks.h), apart; main.(*Acc).Add, which
# exists only inlined, is matched by name, traced entry-only with its 2000
# inlined calls counted, none out of line.  main.Twice's two sites have no
# NOP for a mark: the compiler reused an instruction of the call's line (the
# load of its argument), proven to run once per call all the same: its
# 2000 inlined calls and 25 out of line, exactly (retop counted 0 of its
# inlined calls when it refused such marks).  A lying copy whose mark in
# main.ScaleLoop is overwritten with int3 (0x90 -> 0xcc: a trap, its block
# ends there) counts at the two other sites and says why not there.  main.ScaleLoop,
# traced too, has its 1000 inlined calls of main.Scale inside its one call:
# their marks' traps are probe hits inside it, taken out of its duration.  Patterns that
# name nothing at all are still an error (exit 1).  -d 0.2: snapshots
# every 0.2 s, so the test waits less.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture inlined-default

start_fixture inlined-default -out "$T/out"
fixture=$FIXTURE_PID
retop_batch "$T/snap" -p "$fixture" -t main.Scale -t main.NoSuchFunction -t 'main.(*Acc).Add' \
    -t main.ScaleLoop -t main.Twice -d 0.2
fixture_go "$T/out"
retop_snapshots 1
retop_stop

[ "$(grep -c "no function matches 'main.NoSuchFunction'" "$T/snap.err")" -eq 1 ] ||
    fail "expected one warning for main.NoSuchFunction: $(cat "$T/snap.err")"
[ "$(wc -l <"$T/snap.err")" -eq 1 ] || fail "expected one line on stderr: $(cat "$T/snap.err")"
sc exact "$T/snap" "$T/out" main.Scale || fail "main.Scale's calls through a func value"
[ "$(sc get "$T/snap" main.Scale inlined_sites)" = 3 ] ||
    fail "main.Scale's snapshot says inlined_sites $(sc get "$T/snap" main.Scale inlined_sites), expected 3"
sc inlined "$T/snap" "$T/out" main.Scale 'main.(*Acc).Add' main.Twice || fail "the inlined calls"
sc exact "$T/snap" "$T/out" main.Twice || fail "main.Twice's calls through a func value"
[ "$(sc get "$T/snap" main.ScaleLoop calls)" = 1 ] &&
    [ "$(sc get "$T/snap" main.ScaleLoop probe_hits_inside)" = 1000.0 ] ||
    fail "main.ScaleLoop: $(sc get "$T/snap" main.ScaleLoop calls) calls with $(sc get "$T/snap" main.ScaleLoop probe_hits_inside) probe hits inside, expected 1 with its 1000 inlined calls' marks"
sc status "$T/snap" "entry-only: exists only inlined: its inlined calls are counted, it has no durations" \
    'main.(*Acc).Add' || fail "main.(*Acc).Add's status"

# The text snapshot's note under main.Scale's row.
"$RETOP" -b -p "$fixture" -t main.Scale -n 1 -d 0.2 >"$T/text" 2>"$T/err4" ||
    fail "retop -o text failed: $(head -n 3 "$T/err4")"
grep -q "^    also inlined at 3 sites: [0-9]* inlined calls at 3 of them (not timed); calls and durations above are of calls out of line$" "$T/text" ||
    fail "no note on main.Scale's inlined calls in the text snapshot: $(cat "$T/text")"

# A lying copy: main.ScaleLoop's mark is a trap now.  Never run; -x traces
# the file.
python3 "$abs_top_srcdir/tests/integration/lie.py" byte "$FIXTURES/inlined-default" "$T/lying" \
    main.ScaleLoop 0x90 0xcc >"$T/lie" || fail "lie.py byte failed"
"$RETOP" -b -x "$T/lying" -t main.Scale -n 1 -d 0.2 -o json >"$T/lsnap" 2>"$T/err5" ||
    fail "retop -x on the lying copy failed: $(head -n 3 "$T/err5")"
[ "$(sc get "$T/lsnap" main.Scale inlined_sites_counted)" = 2 ] ||
    fail "the lying copy's main.Scale is counted at $(sc get "$T/lsnap" main.Scale inlined_sites_counted) sites, expected 2 ($(cat "$T/lie"))"
sc get "$T/lsnap" main.Scale inlined_uncounted_why | grep -q "^in main.ScaleLoop: its mark (+0x[0-9a-f]*) is not in a block with the inlined code$" ||
    fail "the lying copy's reason: $(sc get "$T/lsnap" main.Scale inlined_uncounted_why)"

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
echo "inlined: main.Scale $(sc get "$T/snap" main.Scale calls) calls out of line (fixture: 25) and $(sc get "$T/snap" main.Scale inlined_calls) inlined, main.(*Acc).Add $(sc get "$T/snap" 'main.(*Acc).Add' inlined_calls) inlined, main.NoSuchFunction one warning, the lying mark refused, all-unmatched exit 1"
