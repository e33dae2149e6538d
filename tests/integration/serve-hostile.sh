#!/bin/sh
# retop --serve against hostile HTTP clients and a slow SDK:
# - 256 idle and 64 half-sent ("slowloris") connections held open from 16
#   loopback addresses: the server keeps every one of them and still
#   answers 10 of 10 scrapes of /metrics;
# - one address opening 100 connections gets exactly 32 (the per-address
#   limit) and scrapes from another address still answer 10 of 10;
# - a connection that sends nothing is closed after the 10 s idle timeout;
# - while an SDK that takes 5 s per request is asked about a dozen
#   functions, /metrics answers (retop_ready 0); all are attached
#   (retop_ready 1, each tracing) within 3 s, with one line about the SDK; with
#   --no-pid-label no series has a pid label;
# - an executable whose path is not UTF-8 gets a valid label: promtool and
#   a strict decoder accept the page, and the label shows the bytes as \xNN;
# - /metrics is gzip-compressed only for a client that accepts gzip.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd promtool
need_retop
need_fixture payments-default sdkapp-default
[ -x "$abs_top_builddir/tests/sdk/hostile/hostile" ] || fail "hostile SDK server not built"
hh() { python3 "$abs_top_srcdir/tests/integration/hostile_http.py" "$@"; }
# field JSON KEY: one value of a one-line JSON object.
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }



stop_serve() {
    kill -TERM "$RP"
    if wait "$RP"; then rc=0; else rc=$?; fi
    [ "$rc" -eq 0 ] || fail "retop exited $rc after SIGTERM: $(head -n 3 "$T/serve.err")"
}

# ---- 1. hostile clients
start_fixture payments-default -loop -workers 2
start_serve 19200 19299 -p "$FIXTURE_PID" -t 'main.[A-Z]*' -d 0.5
hh idle "$PORT" 20 >"$T/idle" &
idle_pid=$!
t_idle=$(date +%s)

res=$(hh siege "$PORT" 256 64 16 10) || fail "siege client failed"
for k in idle_held:256 slow_held:64 ok:10 idle_after:256 slow_after:64; do
    [ "$(field "$res" "${k%:*}")" = "${k#*:}" ] || fail "siege: want ${k%:*} = ${k#*:}: $res"
done
siege=$res

res=$(hh hog "$PORT" 100 10) || fail "hog client failed"
[ "$(field "$res" held)" = 32 ] || fail "one address holds other than 32 connections: $res"
[ "$(field "$res" ok)" = 10 ] || fail "scrapes failed while one address hogged: $res"
hog=$res

wait "$idle_pid"
idle=$(cat "$T/idle")
[ "$idle" != open ] || fail "an idle connection was still open after 20 s"
python3 -c 'import sys; t = float(sys.argv[1]); sys.exit(not 9.5 <= t <= 12.5)' "$idle" ||
    fail "an idle connection was closed after $idle s, not 10 s"
pq get "http://127.0.0.1:$PORT/metrics" | grep -q '^retop_function_calls_total{function="main.ValidateCard"' ||
    fail "/metrics lost its functions"
# gzip only for a scraper that accepts it, the same series either way.
res=$(hh gzip "http://127.0.0.1:$PORT/metrics") || fail "gzip client failed"
for k in gzip plain q0_plain same_series; do
    [ "$(field "$res" $k)" = True ] || fail "gzip: want $k: $res"
done
gz=$res
stop_serve
kill -0 "$FIXTURE_PID" || fail "the fixture died"
echo "siege $siege; hog $hog; gzip $gz; idle closed after ${idle} s (started $(($(date +%s) - t_idle)) s ago)"

# ---- 2. a slow SDK: /metrics answers while its functions attach, within 3 s
set -f # the -t patterns below are retop's globs, not the shell's
sport=$(pq freeport 19300 19399) || fail "no free port"
start_fixture sdkapp-default -sdk "127.0.0.1:$sport" -calls 20
app=$FIXTURE_PID
pq get "http://127.0.0.1:$sport/debug/functions/export" >"$T/export.jsonl" || fail "no export"
"$abs_top_builddir/tests/sdk/hostile/hostile" -export "$T/export.jsonl" >"$T/hport" &
track_pid $!
wait_file "$T/hport" 5 && sleep 0.2
hurl=http://127.0.0.1:$(head -n 1 "$T/hport")/slow
targs="-t main.* -t retopsdk.(*Location).String -t retopsdk.(*TypeDesc).Alignment"
# How many functions these patterns name, by the SDK's own export (sdkapp
# grows with the tests; the count is not written here).
nf=$(python3 -c '
import fnmatch, json, sys
pats = sys.argv[2:]
names = {json.loads(l)["name"] for l in open(sys.argv[1]) if l.strip()}
print(sum(any(fnmatch.fnmatchcase(n, p) for p in pats) for n in names))' \
    "$T/export.jsonl" 'main.*' 'retopsdk.(*Location).String' 'retopsdk.(*TypeDesc).Alignment')
[ "$nf" -ge 11 ] || fail "the SDK's export names $nf functions for the patterns, expected at least 11"

# Batch: the first snapshot after 0.1 s has all $nf tracing; 1 s budget.
start=$(date +%s%N)
# shellcheck disable=SC2086 # a list of options
expect_exit 0 "$RETOP" -b -p "$app" -s "$hurl" $targs -n 1 -d 0.1 -o json
took=$((($(date +%s%N) - start) / 1000000))
tracing=$(grep -o '"status":"tracing"' "$T/out" | wc -l)
[ "$tracing" -eq "$nf" ] || fail "batch: $tracing of $nf functions tracing: $(head -c 300 "$T/out")"
[ "$took" -lt 3000 ] || fail "batch: attaching $nf functions with a slow SDK took $took ms"
cp "$T/err" "$T/err.slow"
# The same without an SDK (nothing listens on port 1), side by side: the
# slow SDK may cost its 1 s budget, not more.
start=$(date +%s%N)
# shellcheck disable=SC2086 # a list of options
expect_exit 0 "$RETOP" -b -p "$app" -s http://127.0.0.1:1 $targs -n 1 -d 0.1 -o json
base=$((($(date +%s%N) - start) / 1000000))
[ $((took - base)) -lt 1500 ] ||
    fail "batch: the slow SDK cost $((took - base)) ms ($took ms, $base ms without an SDK)"
mv "$T/err.slow" "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "batch: want one SDK line, got: $(cat "$T/err")"
grep -q "no answer within 1.0 s for $nf of $nf functions" "$T/err" ||
    fail "batch: no note about the slow SDK: $(cat "$T/err")"

# --serve: a watcher polls /metrics every 50 ms from before retop starts;
# it must see the page while retop attaches, then retop_ready 1.
PORT=$(pq freeport 19200 19299) || fail "no free port in 127.0.0.1:19200-19299"
hh watch "http://127.0.0.1:$PORT/metrics" 8 >"$T/watch" &
watcher=$!
n=100
until grep -qs polling "$T/watch"; do
    [ "$n" -gt 0 ] || fail "the watcher did not start"
    n=$((n - 1))
    sleep 0.05
done
start=$(date +%s.%N)
# shellcheck disable=SC2086 # a list of options
"$RETOP" --serve "127.0.0.1:$PORT" -p "$app" -s "$hurl" $targs -d 0.2 --no-pid-label 2>"$T/serve.err" &
RP=$!
track_pid "$RP"
wait "$watcher"
grep -q '^ready 0 ' "$T/watch" || fail "/metrics did not answer while attaching: $(cat "$T/watch")"
t_ready=$(sed -n 's/^ready 1 //p' "$T/watch")
[ -n "$t_ready" ] || fail "retop_ready never became 1: $(cat "$T/watch"; cat "$T/serve.err")"
ready=$(python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) - float(sys.argv[2])))' "$t_ready" "$start")
python3 -c 'import sys; sys.exit(float(sys.argv[1]) >= 3)' "$ready" ||
    fail "--serve: ready $ready s after start"
pq get "http://127.0.0.1:$PORT/metrics" >"$T/page" || fail "GET /metrics failed"
n=$(grep -c '^retop_function_status{.*status="tracing"} 1' "$T/page")
[ "$n" -eq "$nf" ] || fail "--serve: $n of $nf functions tracing"
grep -q 'pid=' "$T/page" && fail "--no-pid-label: a pid label is left: $(grep -m1 'pid=' "$T/page")"
expect_exit 2 "$RETOP" -b -p "$app" -t main.main --no-pid-label
grep -q "no answer within 1.0 s for $nf of $nf" "$T/serve.err" ||
    fail "--serve: no note about the slow SDK: $(cat "$T/serve.err")"
stop_serve
set +f
kill -0 "$app" || fail "sdkapp died"
echo "slow SDK: batch $nf functions in $took ms ($base ms without an SDK); --serve answered while attaching, ready $ready s after start"

# ---- 3. a path that is not UTF-8, with a quote and a backslash
bad=$(printf '%s/bin-\377\376"q\\ x' "$T")
cp "$FIXTURES/payments-default" "$bad"
"$bad" -ready "$T/bad.ready" -loop -workers 1 &
track_pid $!
wait_file "$T/bad.ready" 10 || fail "the copied fixture did not start"
start_serve 19200 19299 -x "$bad" -t main.ValidateCard -d 0.2
# The target's series once the probes are in (half a second after /healthz
# was not enough in a loaded parallel run).
serve_ready
pq get "http://127.0.0.1:$PORT/metrics" >"$T/page" 2>"$T/get.err" ||
    fail "GET /metrics failed: $(cat "$T/get.err")"
python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8", "strict")' "$T/page" ||
    fail "the page is not valid UTF-8"
promtool check metrics <"$T/page" >"$T/promtool" 2>&1 ||
    fail "promtool check metrics: $(head -n 5 "$T/promtool")"
want="binary=\"$T/bin-\\\\xff\\\\xfe\\\"q\\\\ x\""
grep -qF "retop_target_processes{$want,pid=\"all\"} 1" "$T/page" ||
    fail "want the label $want: $(grep '^retop_target_processes' "$T/page")"
stop_serve
printf "non-UTF-8 path: label %s accepted by promtool\n" "$want"
