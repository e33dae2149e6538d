#!/bin/sh
# retop's own CPU use as a Prometheus agent: retop --serve tracing 64
# functions of the running demo fixture, sampling every second (-d 1) and
# scraped every second by a real Prometheus for DURATION seconds.  CPU is
# utime + stime of retop from /proc/PID/stat over that window, as % of one
# core (target: < 1%).  The BPF programs run in the target's context, so this
# is what retop itself costs: map reads, the in-flight sweep, rendering the
# page and serving it.  Before Prometheus starts, the same over UNSCRAPED
# seconds with no scraper at all (the page is rendered only when scraped);
# after its window, retop's VmRSS, and VmRSS again while 30 clients hold a
# request for /metrics and read nothing (a page is shared by the responses
# sending it: with a thousand functions, a page of 21 MB is more than the
# kernel's socket buffers take, so a copy each would stay in retop).
#
# Functions: fully traceable ones of main, strconv, sort, strings and fmt
# (pick_functions in lib.sh), without glob characters in their names.
# Environment: DURATION (60), UNSCRAPED (10), NFUNCS (64), VARIANT (demo-VARIANT, default),
# abs_top_builddir (default SRCDIR/build).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

DURATION=${DURATION:-60}
UNSCRAPED=${UNSCRAPED:-10}
NFUNCS=${NFUNCS:-64}
FIX=demo-${VARIANT:-default}

need_root
need_retop
need_cmd python3
need_cmd prometheus
need_fixture "$FIX"
BIN=$FIXTURES/$FIX
pq() { python3 "$abs_top_srcdir/tests/integration/promq.py" "$@"; }

pick_functions "$BIN" "$NFUNCS"

start_fixture "$FIX"
PORT=$(pq freeport 19100 19199) || fail "no free port"
# shellcheck disable=SC2086 # $TARGS is a list
"$RETOP" --serve "127.0.0.1:$PORT" -p "$FIXTURE_PID" $TARGS -d 1 2>"$T/serve.err" &
RP=$!
track_pid "$RP"
n=300
until pq get "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; do
    if ! kill -0 "$RP" 2>/dev/null || [ $n -le 0 ]; then
        fail "retop --serve did not come up: $(head -n 3 "$T/serve.err")"
    fi
    n=$((n - 1))
    sleep 0.1
done
# Once every function is attached (or refused): retop_ready 1.
n=1200
until pq get "http://127.0.0.1:$PORT/metrics" >"$T/page" && grep -q '^retop_ready 1' "$T/page"; do
    [ $n -gt 0 ] || fail "retop --serve not ready after 120 s: $(head -n 3 "$T/serve.err")"
    n=$((n - 1))
    sleep 0.1
done
traced=$(grep -c '^retop_function_status{.*status="tracing"' "$T/page")
# vm FIELD: a memory figure of retop in KiB.
vm() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$RP/status"; }
u0=$(cpu_s "$RP") ut0=$(now)
sleep "$UNSCRAPED"
u1=$(cpu_s "$RP") ut1=$(now)

start_prometheus "$PORT" || fail "Prometheus never scraped retop: $(tail -n 3 "$T/prom.err")"
prom=$PROM

echo "serve-cpu: retop --serve -d 1, $traced of $NFUNCS functions of $FIX tracing, Prometheus scraping every 1 s, ${DURATION} s"
c0=$(cpu_s "$RP") t0=$(now)
sleep "$DURATION"
c1=$(cpu_s "$RP") t1=$(now)
scrapes=$(pq query "$prom" "count_over_time(up{job=\"retop\"}[${DURATION}s])" "$t1") || scrapes=nan
up_ok=$(pq query "$prom" "sum_over_time(up{job=\"retop\"}[${DURATION}s])" "$t1") || up_ok=nan
scrape_ms=$(pq query "$prom" "avg_over_time(scrape_duration_seconds{job=\"retop\"}[${DURATION}s]) * 1000" "$t1") || scrape_ms=nan
sample_ms=$(pq query "$prom" "avg_over_time(retop_sample_duration_seconds[${DURATION}s]) * 1000" "$t1") || sample_ms=nan
series=$(pq query "$prom" "scrape_samples_scraped{job=\"retop\"}" "$t1") || series=nan
bytes=$(pq get "http://127.0.0.1:$PORT/metrics" | wc -c)
rss=$(vm VmRSS)
# 30 clients that ask and never read (4 KiB receive buffers), held 3 s.
held=$(python3 - "$PORT" "$RP" <<'PY'
import socket, sys, time
conns = []
for _ in range(30):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    conns.append(s)
    time.sleep(0.1)
time.sleep(3)
print([l.split()[1] for l in open("/proc/%s/status" % sys.argv[2]) if l.startswith("VmRSS:")][0])
for s in conns:
    s.close()
PY
) || held=nan

t2=$(now)
kill -TERM "$RP"
if wait "$RP"; then rc=0; else rc=$?; fi
t3=$(now)
[ "$rc" -eq 0 ] || fail "retop exited $rc after SIGTERM: $(head -n 3 "$T/serve.err")"

python3 - "$c0" "$c1" "$t0" "$t1" "$t2" "$t3" "$u0" "$u1" "$ut0" "$ut1" <<EOF
import sys
c0, c1, t0, t1, t2, t3, u0, u1, ut0, ut1 = map(float, sys.argv[1:])
print("  unscraped: retop CPU %.3f%% of one core over %.1f s" % (100 * (u1 - u0) / (ut1 - ut0), ut1 - ut0))
pct = 100 * (c1 - c0) / (t1 - t0)
print("  retop CPU: %.2f s over %.1f s = %.3f%% of one core (target < 1%%): %s"
      % (c1 - c0, t1 - t0, pct, "ok" if pct < 1 else "OVER TARGET"))
print("  scrapes: $scrapes (successful: $up_ok), $series samples and $bytes bytes a page;"
      " scrape %.2f ms, BPF sample %.2f ms on average" % (float("$scrape_ms"), float("$sample_ms")))
print("  VmRSS $rss KiB scraped; $held KiB with 30 clients holding a request and reading nothing")
print("  SIGTERM to exit: %.2f s" % (t3 - t2))
EOF
