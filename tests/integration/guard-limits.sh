#!/bin/sh
# Guardrails: --max-duration and --max-memory.
# - batch: by default the snapshot says max_duration_s 600 and the time left;
#   with --max-duration 2, retop detaches every function by itself after 2 s
#   (status "detached: --max-duration 2 s reached", auto_detached counts them),
#   prints that last snapshot and exits 0, and the text header says so;
# - --serve --max-duration 5: retop keeps serving, but once time is up it holds
#   no BPF link or program (the runtime watchers and maps are gone too);
# - memory: bpf_map_bytes is what the kernel charges retop's maps: under
#   11 MiB with one function traced at the defaults (the maps are allocated
#   per call, or sized for --max-functions; measured with bpftool map show,
#   10.90 MiB in all: the in-flight buckets 4.13 MiB, the goroutines' LRU
#   records 2.58 MiB, the time split's 2.15 MiB (split_calls, its LRU of
#   8,192 calls' figures, 1.56 MiB; split_stats, 600 bytes a slot, 0.59
#   MiB), a thousand functions' rows and callers' buckets 1.30 MiB, .bss
#   0.39 MiB, the ring buffers 0.28 MiB); the difference --max-in-flight
#   makes is the in-flight map's buckets; --max-memory below what the maps
#   may take (the in-flight map full) refuses to attach with one line and
#   exit 1.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd bpftool
need_retop
need_fixture payments-default
top() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().split("\n")[int(sys.argv[3])])[sys.argv[2]])' "$@"; }
funcs="main.ProcessPayment main.ValidateCard main.CalculateTotal"

start_fixture payments-default -loop -workers 2
fixture=$FIXTURE_PID
kill -USR1 "$fixture"

# ---- the default limit is stated
"$RETOP" -b -p "$fixture" -t main.CalculateTotal -d 0.3 -n 1 -o json >"$T/def" 2>"$T/err" ||
    fail "retop -b -n 1 failed: $(head -n 3 "$T/err")"
[ "$(top "$T/def" max_duration_s -1)" = 600.0 ] || fail "default max_duration_s is $(top "$T/def" max_duration_s -1), expected 600"
python3 -c 'import sys; r = float(sys.argv[1]); sys.exit(not 599 <= r < 600)' "$(top "$T/def" remaining_s -1)" ||
    fail "remaining_s $(top "$T/def" remaining_s -1) after 0.3 s of a 600 s limit"

# ---- batch: auto-detach after 2 s, exit 0
start=$(date +%s%N)
"$RETOP" -b -p "$fixture" -t main.ProcessPayment -t main.ValidateCard -t main.CalculateTotal \
    -d 0.5 --max-duration 2 -o json >"$T/snap" 2>"$T/err" &
rp=$!
track_pid "$rp"
sc gone "$rp" 15 || fail "retop --max-duration 2 still runs after 15 s"
if wait "$rp"; then rc=0; else rc=$?; fi
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$rc" -eq 0 ] || fail "retop --max-duration 2 exited $rc: $(head -n 3 "$T/err")"
[ "$elapsed" -ge 2000 ] || fail "retop --max-duration 2 ended after $elapsed ms: too early"
# shellcheck disable=SC2086 # $funcs is a list
sc status "$T/snap" "detached: --max-duration 2 s reached" $funcs ||
    fail "the last snapshot does not say every function was detached by --max-duration"
[ "$(top "$T/snap" auto_detached -1)" = 3 ] || fail "auto_detached is $(top "$T/snap" auto_detached -1), expected 3"
[ "$(top "$T/snap" remaining_s -1)" = 0.0 ] || fail "remaining_s is $(top "$T/snap" remaining_s -1) at the end"
[ "$(top "$T/snap" auto_detached 0)" = 0 ] || fail "auto_detached is not 0 in the first snapshot"
python3 -c 'import sys; r = float(sys.argv[1]); sys.exit(not 0 < r <= 1.6)' "$(top "$T/snap" remaining_s 0)" ||
    fail "first snapshot after 0.5 s of 2 s: remaining_s $(top "$T/snap" remaining_s 0)"
grep -q 'tracing stopped after --max-duration 2 s: 3 functions detached' "$T/err" ||
    fail "no line on stderr says why tracing stopped: $(cat "$T/err")"
for f in $funcs; do
    [ "$(sc get "$T/snap" "$f" unmatched_returns)" = 0 ] || fail "$f: unmatched returns after auto-detach"
done
"$RETOP" -b -p "$fixture" -t main.CalculateTotal -d 0.3 -n 1 --max-duration 1 >"$T/text" 2>"$T/err" ||
    fail "retop -b text failed"
grep -q '^detach in 0:01, memory: bpf maps [0-9.]* MiB, retop [0-9.]* MiB$' "$T/text" ||
    fail "the text header does not state the time left and the memory: $(head -n 3 "$T/text")"

# ---- --serve: time up means nothing left in the kernel, while retop runs on
for try in 1 2 3 4 5; do
    PORT=$(pq freeport 19100 19199) || fail "no free port in 127.0.0.1:19100-19199"
    # --budget 0: every probe stays in until time is up (the budget may
    # take them out between its slices), so their removal is what is seen.
    "$RETOP" --serve "127.0.0.1:$PORT" -p "$fixture" -t 'main.[A-Z]*' -d 0.3 --max-duration 5 \
        --budget 0 2>"$T/serve.err" &
    RP=$!
    track_pid "$RP"
    n=100
    while [ $n -gt 0 ] && running "$RP" && ! pq get "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; do
        n=$((n - 1))
        sleep 0.05
    done
    running "$RP" && break
    grep -q 'cannot listen' "$T/serve.err" || fail "retop --serve failed: $(head -n 3 "$T/serve.err")"
done
# /healthz answers before the probes are in: poll up to 4 s for them
# (indexing, loading the programs and timing a hit come first).
n=80
until sc holds "$RP" >"$T/held" && grep -q '^link ' "$T/held"; do
    [ $n -gt 0 ] || fail "retop --serve holds no BPF link before its time is up"
    n=$((n - 1))
    sleep 0.05
done
sc released "$T/held" 8 || fail "8 s after the probes were seen (--max-duration 5), retop still holds BPF links or programs"
running "$RP" || fail "retop --serve exited at --max-duration instead of serving on"
[ -z "$(sc holds "$RP")" ] || fail "retop --serve still holds: $(sc holds "$RP" | tr '\n' ' ')"
pq get "http://127.0.0.1:$PORT/metrics" >"$T/metrics" || fail "/metrics no longer answers after auto-detach"
kill -TERM "$RP"
wait "$RP" || fail "retop --serve exited $? on SIGTERM after auto-detach"

# ---- memory: stated as the kernel charges it, and capped
"$RETOP" -b -p "$fixture" -t main.CalculateTotal -d 0.2 -n 1 --max-in-flight 1024 -o json \
    >"$T/small" 2>"$T/err" || fail "retop --max-in-flight 1024 failed: $(head -n 3 "$T/err")"
big=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[0])["memory"]["bpf_map_bytes"])' "$T/def")
small=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[0])["memory"]["bpf_map_bytes"])' "$T/small")
# The in-flight maps are allocated per call: --max-in-flight changes their
# bucket arrays, 16 bytes an entry rounded up to a power of two.  The
# default holds 8192 calls in the first map and 253952 (262144 buckets) in
# the spill map; 1024 is 1024 in the first and a spill map of one entry.
# The calls in flight when each was read differ by a few elements.
want=$((16 * (8192 + 262144 - 1024 - 1)))
python3 -c 'import sys; b, s, want = map(int, sys.argv[1:]); sys.exit(abs((b - s) - want) > want * 0.01)' "$big" "$small" "$want" ||
    fail "bpf_map_bytes $big (default) - $small (--max-in-flight 1024) is not the in-flight maps' buckets, $want bytes"
[ "$big" -le 11534336 ] || fail "bpf_map_bytes $big with one function traced at the defaults: more than 11 MiB"
user=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[0])["memory"]["user_bytes"])' "$T/def")
[ "$user" -gt 1048576 ] || fail "user_bytes $user: retop's resident memory is not stated"
limit=$(( (big + user) / 2 ))
expect_exit 1 "$RETOP" -b -p "$fixture" -t main.CalculateTotal -n 1 --max-memory "$limit"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "--max-memory: expected one error line, got: $(cat "$T/err")"
grep -q '^retop: not attaching: BPF maps .* exceed --max-memory' "$T/err" ||
    fail "--max-memory: unexpected message: $(cat "$T/err")"
"$RETOP" -b -p "$fixture" -t main.CalculateTotal -n 1 -d 0.2 --max-memory 1G >/dev/null 2>"$T/err" ||
    fail "--max-memory 1G refused: $(cat "$T/err")"
expect_exit 2 "$RETOP" -b -p "$fixture" -t main.CalculateTotal --max-memory lots
expect_exit 2 "$RETOP" -b -p "$fixture" -t main.CalculateTotal --max-duration -1
kill -0 "$fixture" || fail "the fixture died"
echo "auto-detach after $elapsed ms (--max-duration 2), serve released its probes; maps $big B (in-flight 1024: $small B), retop $user B"
