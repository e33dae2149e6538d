#!/bin/sh
# Load: 100 goroutines each Recurse(1000), all held at the bottom (100,100
# calls in flight at once), three rounds: 300,300 calls of main.Recurse.
# With the default --max-in-flight every one is counted and none dropped,
# and the in-flight map, allocated per call, takes what --help says: its
# buckets with nothing in flight, and so many bytes more a call held (read
# from fdinfo while the fixture holds all 100,100).  300 goroutines held at
# once (300,300 calls in flight) are all counted too, with a map that holds
# them.  With a deliberately small map, each lost call is counted as
# dropped: calls + dropped is exactly the fixture's count, and so are the
# RETs that found no entry (unmatched_returns).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture stress-default
fx() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# memlock PID: max_entries and memlock of the in-flight maps among PID's
# fds (those with 24-byte keys and 32-byte values: the first map and the
# spill map), summed, as the kernel accounts them.
memlock() {
    for f in /proc/"$1"/fdinfo/*; do
        awk '/^key_size:/ { k = $2 } /^value_size:/ { v = $2 } /^max_entries:/ { n = $2 }
             /^memlock:/ { m = $2 } END { if (k == 24 && v == 32) print n, m }' "$f" 2>/dev/null
    done | awk '{ n += $1; m += $2 } END { if (NR) print n, m }'
}

# run NAME WORKERS ROUNDS RETOP-ARGS...: one fixture, one retop; snapshots
# in $T/NAME.snap, retop's stderr in $T/NAME.snap.err; the in-flight map's
# memlock once attached in $idle, and with every call of the first round
# held in $held.
run() {
    name=$1 workers=$2 rounds=$3
    shift 3
    snap=$T/$name.snap out=$T/$name.out
    start_fixture stress-default -mode hold -workers "$workers" -depth 1000 -rounds "$rounds" \
        -out "$out" -pause "$T/$name.held"
    fixture=$FIXTURE_PID
    # --budget 0: 300,300 calls in a few seconds are over the default
    # budget, which would estimate them; this test is about holding
    # 100,100 calls in flight, every one timed.
    retop_batch "$snap" -p "$fixture" -t main.Recurse -d 0.5 --budget 0 "$@"
    idle=$(memlock "$RETOP_PID")
    kill -USR1 "$fixture"
    wait_file "$T/$name.held" 60 || fail "the fixture never held its calls (did it crash?)"
    held=$(memlock "$RETOP_PID")
    rm -f "$T/$name.held"
    fixture_result "$out"
    retop_snapshots 2
    retop_stop "$fixture"
    kill -TERM "$fixture"
    wait "$fixture" || true
    [ "$(fx "$out" calls)" -eq $((300300 / 3 * rounds * workers / 100)) ] ||
        fail "the fixture made $(fx "$out" calls) calls"
    [ "$(fx "$out" in_flight_peak)" -eq $((workers * 1001)) ] ||
        fail "the fixture held $(fx "$out" in_flight_peak) calls at once"
}

run default 100 3
# --help states the default map's kernel memory; the kernel agrees: its
# buckets at load, and so many bytes a call in flight (fdinfo's memlock
# counts the elements of a map allocated per element).
# shellcheck disable=SC2086 # two numbers, split on purpose
set -- $idle $held
[ "${1:-0}" -eq 262144 ] && [ "${3:-0}" -eq 262144 ] ||
    fail "no in-flight map of 262144 entries in retop's fds (got '$idle', '$held')"
help=$("$RETOP" --help | tr -s ' \n' '  ')
per=$(printf '%s\n' "$help" | sed -n 's/.*about \([0-9]*\) bytes a call in flight.*/\1/p')
mib=$(printf '%s\n' "$help" | sed -n 's/.*(262144: \([0-9]*\) MiB of kernel memory.*/\1/p')
[ "$mib" -eq $((($2 + 524288) / 1048576)) ] ||
    fail "--help says $mib MiB at load; the kernel accounts $2 bytes with no call in flight"
[ $(($4 - $2)) -eq $((per * 100100)) ] ||
    fail "with 100100 calls held the in-flight map grew by $(($4 - $2)) bytes, not $per a call (--help)"
sc exact "$snap" "$out" main.Recurse ||
    fail "stress -mode hold (100 x Recurse(1000) held, 3 rounds), retop -b -p PID -t main.Recurse: counts differ"
for k in dropped returns_before_attach; do
    v=$(sc get "$snap" main.Recurse $k)
    [ "$v" -eq 0 ] || fail "default --max-in-flight: $k is $v, expected 0"
done
! grep -q 'dropped' "$T/default.snap.err" || fail "retop warned of dropped calls with the default capacity: $(grep dropped "$T/default.snap.err")"
echo "100 x Recurse(1000) held, 3 rounds, default --max-in-flight (in-flight map: $2 bytes, $4 with 100100 calls held): $(sc get "$snap" main.Recurse calls) calls of 300300, 0 dropped"

# 300,300 calls in flight at once: more than the default capacity, so a
# map that holds them.
run wide 300 1 --max-in-flight 524288
sc exact "$snap" "$out" main.Recurse ||
    fail "stress -mode hold (300 x Recurse(1000) held), --max-in-flight 524288: counts differ"
for k in dropped returns_before_attach unmatched_returns; do
    v=$(sc get "$snap" main.Recurse $k)
    [ "$v" -eq 0 ] || fail "300300 calls in flight: $k is $v, expected 0"
done
# shellcheck disable=SC2086 # two numbers, split on purpose
set -- $idle $held
[ $(($4 - $2)) -eq $((per * 300300)) ] ||
    fail "with 300300 calls held the in-flight map grew by $(($4 - $2)) bytes, not $per a call"
echo "300 x Recurse(1000) held at once, --max-in-flight 524288: $(sc get "$snap" main.Recurse calls) calls of 300300, 0 dropped; in-flight map $2 bytes, $4 held"

run small 100 3 --max-in-flight 50000
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
[ "$(grep -c 'dropped' "$T/small.snap.err")" -eq 1 ] && grep -q 'calls dropped.*raise --max-in-flight' "$T/small.snap.err" ||
    fail "expected one warning saying what to raise, got: $(grep dropped "$T/small.snap.err" | head -n 3)"
echo "--max-in-flight 50000: $calls calls + $dropped dropped = 300300; $unmatched unmatched returns; one warning"
