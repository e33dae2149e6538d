#!/bin/sh
# Load: 100 goroutines each Recurse(1000), all held at the bottom (100,100
# calls in flight at once), three rounds: 300,300 calls of main.Recurse.
# With the default --max-in-flight every one is counted and none dropped;
# with a deliberately small map, each lost call is counted as dropped:
# calls + dropped is exactly the fixture's count, and so are the RETs that
# found no entry (unmatched_returns).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture stress-default
fx() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# run NAME RETOP-ARGS...: one fixture, one retop; snapshots in $T/NAME.snap.
run() {
    name=$1
    shift
    snap=$T/$name.snap out=$T/$name.out
    start_fixture stress-default -mode hold -workers 100 -depth 1000 -rounds 3 -out "$out"
    fixture=$FIXTURE_PID
    # --budget 0: 300,300 calls in a few seconds are over the default
    # budget, which would estimate them; this test is about holding
    # 100,100 calls in flight, every one timed.
    "$RETOP" -b -p "$fixture" -t main.Recurse -d 0.5 -o json --budget 0 "$@" >"$snap" 2>"$T/$name.err" &
    rp=$!
    track_pid "$rp"
    sc wait "$snap" 1 15 "$rp" || fail "retop did not attach: $(head -n 3 "$T/$name.err")"
    # The in-flight map's kernel memory, as the kernel accounts it (fdinfo
    # of retop's map fds: the one with 24-byte keys and values).
    memlock=$(for f in /proc/"$rp"/fdinfo/*; do
        awk '/^key_size:/ { k = $2 } /^value_size:/ { v = $2 } /^max_entries:/ { n = $2 }
             /^memlock:/ { m = $2 } END { if (k == 24 && v == 24) print n, m }' "$f" 2>/dev/null
    done | head -n 1)
    kill -USR1 "$fixture"
    wait_file "$out" 60 || fail "no result from the fixture in 60 s (did it crash?)"
    sc wait "$snap" $(($(sc lines "$snap") + 2)) 5 "$rp" || fail "retop stopped: $(head -n 3 "$T/$name.err")"
    kill -INT "$rp"
    if wait "$rp"; then rc=0; else rc=$?; fi
    [ "$rc" -eq 0 ] || fail "retop exited $rc after SIGINT: $(head -n 3 "$T/$name.err")"
    kill -0 "$fixture" || fail "the fixture died while traced"
    kill -TERM "$fixture"
    wait "$fixture" || true
    [ "$(fx "$out" calls)" -eq 300300 ] || fail "the fixture made $(fx "$out" calls) calls, expected 300300"
    [ "$(fx "$out" in_flight_peak)" -eq 100100 ] || fail "the fixture held $(fx "$out" in_flight_peak) calls at once"
}

run default
# --help states the default map's kernel memory; the kernel agrees.
# shellcheck disable=SC2086 # two numbers, split on purpose
set -- $memlock
[ "${1:-0}" -eq 262144 ] || fail "no in-flight map of 262144 entries in retop's fds (got '$memlock')"
help=$("$RETOP" --help | tr -s ' \n' '  ')
per=$(printf '%s\n' "$help" | sed -n 's/.*about \([0-9]*\) bytes a call.*/\1/p')
mib=$(printf '%s\n' "$help" | sed -n 's/.*(262144: \([0-9]*\) MiB of kernel memory.*/\1/p')
[ "$per" -eq $((($2 + 131072) / 262144)) ] && [ "$mib" -eq $((($2 + 524288) / 1048576)) ] ||
    fail "--help says $mib MiB, $per bytes a call; the kernel accounts $2 bytes for 262144 entries"
sc exact "$snap" "$out" main.Recurse ||
    fail "stress -mode hold (100 x Recurse(1000) held, 3 rounds), retop -b -p PID -t main.Recurse: counts differ"
for k in dropped returns_before_attach; do
    v=$(sc get "$snap" main.Recurse $k)
    [ "$v" -eq 0 ] || fail "default --max-in-flight: $k is $v, expected 0"
done
! grep -q 'dropped' "$T/default.err" || fail "retop warned of dropped calls with the default capacity: $(grep dropped "$T/default.err")"
echo "100 x Recurse(1000) held, 3 rounds, default --max-in-flight ($2 bytes of kernel memory): $(sc get "$snap" main.Recurse calls) calls of 300300, 0 dropped"

run small --max-in-flight 50000
calls=$(sc get "$snap" main.Recurse calls) dropped=$(sc get "$snap" main.Recurse dropped)
unmatched=$(sc get "$snap" main.Recurse unmatched_returns)
[ "$dropped" -gt 0 ] || fail "--max-in-flight 50000 with 100100 calls in flight: nothing dropped"
[ $((calls + dropped)) -eq 300300 ] ||
    fail "--max-in-flight 50000: $calls calls + $dropped dropped = $((calls + dropped)), expected 300300"
[ "$unmatched" -eq "$dropped" ] ||
    fail "--max-in-flight 50000: $unmatched unmatched returns, expected one per dropped call ($dropped)"
for k in in_flight orphans; do
    v=$(sc get "$snap" main.Recurse $k)
    [ "$v" -eq 0 ] || fail "--max-in-flight 50000: $k is $v, expected 0"
done
[ "$(grep -c 'dropped' "$T/small.err")" -eq 1 ] && grep -q 'calls dropped.*raise --max-in-flight' "$T/small.err" ||
    fail "expected one warning saying what to raise, got: $(grep dropped "$T/small.err" | head -n 3)"
echo "--max-in-flight 50000: $calls calls + $dropped dropped = 300300; $unmatched unmatched returns; one warning"
