# shellcheck shell=sh
# Sourced after lib.sh: a real Go server under real load, for the tests and
# benchmarks that trace a whole package of it.  Debian's Prometheus
# ingests 40,000 series a second from a loopback target and answers a
# client's queries one after the other.
#   prom_start: the target and Prometheus up, scraping; sets prom (its
#     pid) and url.
#   prom_own FILE: Prometheus's count of the requests it timed, every
#     handler.
#   prom_queries SECS OUT: queries one after the other for SECS s (the
#     API's handlers, tsdb's queriers); OUT gets how many were answered
#     (non-zero exit: a query failed).

prom_start() {
    # The target it scrapes: 40,000 series, every 1 s (the head's
    # appenders, its series, its chunks: tsdb's hot path).
    tport=$(pq freeport 19500 19549) || fail "no free port in 127.0.0.1:19500-19549"
    python3 - "$tport" "$T/target.ready" >"$T/target.err" 2>&1 <<'PY' &
import http.server, random, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = "".join("load_series{i=\"%d\"} %d\n" % (i, random.randrange(1000)) for i in range(40000)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H)
open(sys.argv[2], "w").close()
s.serve_forever()
PY
    track_pid $!
    wait_file "$T/target.ready" 10 || fail "the scrape target did not start: $(tail -n 3 "$T/target.err")"

    pport=$(pq freeport 19550 19599) || fail "no free port in 127.0.0.1:19550-19599"
    cat >"$T/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: load
    static_configs:
      - targets: ['127.0.0.1:$tport']
EOF
    prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
        --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$T/prom.err" 2>&1 &
    prom=$!
    track_pid "$prom"
    url=http://127.0.0.1:$pport
    pq wait "$url" 'up{job="load"}' 30 >/dev/null || fail "Prometheus did not scrape its target: $(tail -n 3 "$T/prom.err")"
}

prom_own() {
    pq get "$url/metrics" >"$T/page" || fail "GET /metrics failed"
    awk '/^prometheus_http_request_duration_seconds_count/ { n += $2 } END { printf "%d\n", n }' "$T/page" >"$1"
}

prom_queries() {
    python3 - "$url" "$1" >"$2" <<'PY'
import json, sys, time, urllib.parse, urllib.request
url, secs = sys.argv[1], float(sys.argv[2])
qs = ["sum(load_series)", "count(load_series)", "max_over_time(load_series[10s])",
      "rate(prometheus_tsdb_head_samples_appended_total[5s])"]
n, end = 0, time.time() + secs
while time.time() < end:
    q = qs[n % len(qs)]
    r = json.load(urllib.request.urlopen(url + "/api/v1/query?" + urllib.parse.urlencode({"query": q}), timeout=30))
    if r.get("status") != "success":
        print("query %r: %s" % (q, r)); sys.exit(1)
    n += 1
print(n)
PY
}
