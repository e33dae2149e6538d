#!/bin/sh
# retop --serve scraped by a real Prometheus (the Debian package) every second.
# Through Prometheus's own query API: retop_function_calls_total at the end
# minus at the start equals the payments fixture's own per-function counts
# exactly, and histogram_quantile(0.5) of the exported histogram is within one
# `le` bucket of the fixture's own median (its own clock).  Percentile gauges
# are not exported.  Also: promtool accepts the page; SIGTERM
# ends retop with 0 within 2 s and every BPF program and link it held is gone;
# no -t is a usage error (2); a port in use is one error line and exit 1.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd bpftool
need_cmd prometheus
need_cmd promtool
need_retop
need_fixture payments-default
now() { python3 -c 'import time; print("%.3f" % time.time())'; }
funcs="main.ValidateCard main.ProcessPayment main.CalculateTotal"



start_fixture payments-default -calls 60 -workers 4 -out "$T/result"
fixture=$FIXTURE_PID
start_serve 19100 19199 -p "$fixture" -t 'main.[A-Z]*' -d 0.5
retop_url=http://127.0.0.1:$PORT

# ---- usage errors and a port in use, while retop holds $PORT
expect_exit 2 "$RETOP" --serve "127.0.0.1:$PORT" -p "$fixture"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "--serve without -t: expected one error line, got: $(cat "$T/err")"
for bad in :9100 ::1:9100 127.0.0.1:0 127.0.0.1:65536 '[::1]9100' 'host:'; do
    expect_exit 2 "$RETOP" --serve "$bad" -p "$fixture" -t main.ValidateCard
done
expect_exit 1 "$RETOP" --serve "127.0.0.1:$PORT" -p "$fixture" -t main.ValidateCard
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "port in use: expected one error line, got: $(cat "$T/err")"
grep -q 'in use' "$T/err" || fail "port in use: the error does not say so: $(cat "$T/err")"

# ---- a real Prometheus, scraping every second
start_prometheus "$PORT" || fail "Prometheus never scraped retop: $(tail -n 3 "$T/prom.err")"
prom=$PROM
pq wait "$prom" 'count(retop_function_calls_total{function="main.ValidateCard"})' 10 ||
    fail "no retop_function_calls_total in Prometheus"
t_start=$(now)

kill -USR1 "$fixture"
wait_file "$T/result" 20 || fail "no result from the fixture in 20 s"
t_done=$(now)
# Three more scrapes of a page sampled after the last call.
pq wait "$prom" "timestamp(retop_function_calls_total{function=\"main.ValidateCard\"}) > $t_done + 3" 15 ||
    fail "Prometheus stopped scraping retop: $(head -n 3 "$T/serve.err")"
t_end=$(now)

# ---- exact counts, read back through Prometheus
summary=""
for f in $funcs; do
    sel="retop_function_calls_total{function=\"$f\",pid=\"$fixture\"}"
    a=$(pq query "$prom" "$sel" "$t_start") || fail "$f: no value at the start"
    b=$(pq query "$prom" "$sel" "$t_end") || fail "$f: no value at the end"
    want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_func"][sys.argv[2]]["calls"])' "$T/result" "$f")
    got=$(python3 -c 'import sys; print(int(float(sys.argv[2])) - int(float(sys.argv[1])))' "$a" "$b")
    [ "$got" = "$want" ] || fail "$f: Prometheus says $got calls ($b - $a), the fixture counted $want"
    c=$(pq query "$prom" "retop_function_duration_seconds_count{function=\"$f\"}" "$t_end")
    [ "$c" = "$b" ] || fail "$f: histogram _count $c != calls_total $b"
    summary="$summary$f $got/$want; "
done

# ---- the histogram: Prometheus's p50 within one `le` bucket of the
#      fixture's own median (nearest rank, by its own clock; 2% more for the
#      two clocks' different start and end points)
h='retop_function_duration_seconds_bucket{function="main.ValidateCard"}'
q50=$(pq query "$prom" "histogram_quantile(0.5, $h)" "$t_end") || fail "histogram_quantile failed"
p50=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_func"]["main.ValidateCard"]["p50_ns"] / 1e9)' "$T/result")
width=$(pq lewidth "$prom" "$h" "$t_end" "$p50") || fail "no le bucket holds the fixture's p50 $p50"
python3 -c 'import sys; q, p, w = map(float, sys.argv[1:]); sys.exit(abs(q - p) > w + 0.02 * p)' \
    "$q50" "$p50" "$width" ||
    fail "histogram_quantile(0.5) = $q50 s, the fixture's p50 = $p50 s: more than one le bucket ($width s) apart"
pq get "$retop_url/metrics" | grep -q '_p50_\|_p99_' && fail "percentile gauges are exported"
# ---- latency by caller: every ValidateCard call comes from one closure
cc=$(pq query "$prom" 'retop_caller_calls_total{function="main.ValidateCard",caller="main.ProcessPayment.func1"}' "$t_end") ||
    fail "no retop_caller_calls_total for main.ValidateCard's caller main.ProcessPayment.func1"
vc=$(pq query "$prom" 'retop_function_calls_total{function="main.ValidateCard"}' "$t_end")
[ "$cc" = "$vc" ] || fail "main.ValidateCard: calls by caller $cc != calls_total $vc"
errors=$(pq query "$prom" 'retop_probe_attach_errors_total' "$t_end")
[ "$errors" = 0 ] || fail "retop_probe_attach_errors_total = $errors"

# ---- the page itself passes promtool's parser and linter
pq get "$retop_url/metrics" >"$T/scraped" || fail "GET /metrics failed"
promtool check metrics <"$T/scraped" >"$T/promtool" 2>&1 ||
    fail "promtool check metrics: $(head -n 5 "$T/promtool")"
pq get "$retop_url/nothing" >/dev/null 2>&1 && fail "GET /nothing answered 200"

# ---- SIGTERM: exit 0 within 2 s, and nothing left in the kernel
sc holds "$RP" >"$T/held"
grep -q '^link ' "$T/held" || fail "retop holds no BPF link while serving"
term_exits_0 "$RP" 2 retop
left=""
sc released "$T/held" 5 ||
    fail "after SIGTERM, the kernel still has retop's BPF objects"
kill -0 "$fixture" || fail "the fixture died while traced"
echo "calls via Prometheus: ${summary%; }; p50 fixture $p50 s, histogram_quantile $q50 s (le bucket $width s)"
