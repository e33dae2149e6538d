#!/bin/sh
# Durations against a real server's own clock: Debian's Prometheus times
# every HTTP request it serves with promhttp.InstrumentHandlerDuration (a
# closure, ...InstrumentHandlerDuration.func2, that reads time.Now() before
# the handler and observes time.Since() after it, into
# prometheus_http_request_duration_seconds).  retop traces that closure
# while 204 requests are made to /metrics; in each of 3 rounds its call count
# must equal the increase of Prometheus's own request count exactly, and the
# median of the rounds' differences between retop's mean and Prometheus's
# mean (its histogram's sum / count) must be within 3%: what the probes'
# own traps add to a call (the end of the entry hit after retop reads the
# clock, the start of the RET hit before it does) stays small next to a
# handler of ~0.6 ms.  In 3 more rounds retop traces it together with the
# closure it calls after its timer stopped (...InstrumentHandlerDuration.func3,
# the default exemplar function): two probe hits inside each call, whose
# traps (some 10% of a request) retop takes out of the closure's durations;
# counts must be as exact, and the correction must take out a third at
# least of what the two traps add (some 10%; see below).  The first /metrics read of
# a round is one of the 204, traced and observed alike.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd prometheus
need_retop
fn=github.com/prometheus/client_golang/prometheus/promhttp.InstrumentHandlerDuration.func2
inner=github.com/prometheus/client_golang/prometheus/promhttp.InstrumentHandlerDuration.func3
N=204

pport=$(pq freeport 19400 19499) || fail "no free port in 127.0.0.1:19400-19499"
# No scrape job: every request Prometheus serves is one of ours.
printf 'global:\n  scrape_interval: 1h\nscrape_configs: []\n' >"$T/prom.yml"
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$T/prom.err" 2>&1 &
prom=$!
track_pid "$prom"
url=http://127.0.0.1:$pport
n=100
until pq get "$url/-/ready" >/dev/null 2>&1; do
    [ "$n" -gt 0 ] || fail "Prometheus did not become ready: $(tail -n 3 "$T/prom.err")"
    n=$((n - 1))
    sleep 0.1
done

# own FILE: Prometheus's request count and duration sum for /metrics.
own() {
    pq get "$url/metrics" >"$T/page" || fail "GET /metrics failed"
    sed -n 's/^prometheus_http_request_duration_seconds_\(sum\|count\){handler="\/metrics"} \(.*\)$/\1 \2/p' "$T/page" >"$1"
}

# The series exists once a first /metrics request has been observed.
own "$T/warm"
r=1
while [ "$r" -le 6 ]; do
    # Rounds 4-6 trace the closure as well as the one it calls once its
    # timer stopped (InstrumentHandlerDuration.func3, the default exemplar
    # function): two probe hits inside each call, taken out of its duration.
    if [ "$r" -le 3 ]; then set -- -t "$fn"; else set -- -t "$fn" -t "$inner"; fi
    retop_batch "$T/snap.$r" -p "$prom" "$@" -d 0.5
    own "$T/own0.$r"
    # The other 203, one after the other from one client.
    python3 -c '
import sys, urllib.request
for _ in range(int(sys.argv[2]) - 1):
    urllib.request.urlopen(sys.argv[1], timeout=5).read()' "$url/metrics" "$N" ||
        fail "GET /metrics failed"
    retop_snapshots 2
    retop_stop
    # Untraced: the read that tells the last of ours.
    own "$T/own1.$r"
    r=$((r + 1))
done

python3 - "$T" "$N" "$fn" "$inner" <<'PY' || fail "retop's durations differ from Prometheus's own clock"
import json, statistics, sys
t, n, fn, inner = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def own(p):
    return {k: float(v) for k, v in (l.split() for l in open(p))}
bad, diffs, ndiffs, udiffs = False, [], [], []
for r in (1, 2, 3, 4, 5, 6):
    a, b = own("%s/own0.%d" % (t, r)), own("%s/own1.%d" % (t, r))
    count = round(b["count"] - a["count"])
    mean = (b["sum"] - a["sum"]) / count * 1e9
    fs = {f["name"]: f for f in json.loads(open("%s/snap.%d" % (t, r)).read().splitlines()[-1])["functions"]}
    f = fs[fn]
    if f["calls"] != count or count != n:
        print("round %d: retop counted %d calls, Prometheus %d requests, %d were made" % (r, f["calls"], count, n))
        bad = True
    d = (f["mean_ns"] - mean) / mean
    sub = f["trap_ns_subtracted"] / f["calls"] if f["calls"] else 0
    extra = ""
    if r > 3:
        if fs.get(inner, {}).get("calls") != n or f["probe_hits_inside"] != 2:
            print("round %d: %s %s calls, %s probe hits inside a call of the closure: expected %d, 2"
                  % (r, inner, fs.get(inner, {}).get("calls"), f["probe_hits_inside"], n))
            bad = True
        extra = "; uncorrected %+.2f%%, %.0f ns of 2 hits taken out a call" % (
            100 * (f["mean_ns"] + sub - mean) / mean, sub)
        ndiffs.append(d)
        udiffs.append((f["mean_ns"] + sub - mean) / mean)
    else:
        diffs.append(d)
    print("round %d: %d requests; Prometheus's mean %.0f ns, retop's %d ns (%+.0f ns, %+.2f%%)%s"
          % (r, count, mean, f["mean_ns"], f["mean_ns"] - mean, 100 * d, extra))
m, nm, un = statistics.median(diffs), statistics.median(ndiffs), statistics.median(udiffs)
print("median difference %+.2f%% traced alone, %+.2f%% with its callee (uncorrected %+.2f%%)"
      % (100 * m, 100 * nm, 100 * un))
# What the closure's own two probes leave in (the end of its entry hit,
# the start of its RET hit: some 15-20 us) is 2-3% of a 0.7 ms request.
if abs(m) > 0.03:
    print("traced alone: more than 3%")
    bad = True
# The callee's two traps, some 10% of a request on a quiet machine, are
# taken out.  Measured against the closure traced alone (what its own two
# probes leave in), the correction must take out a third of what the
# callee's traps add at least: on shared CPUs a trap costs more than the
# cost retop timed on its own code (the 20th percentile of its hits), and a
# run with the machine loaded took out 42% (+4.82% uncorrected, +3.01%
# corrected, +0.49% alone).  Quiet, it takes out nearly all of it.
if un - nm < (un - m) / 3:
    print("with its callee: %+.2f%%, uncorrected %+.2f%%, alone %+.2f%%: the correction took out "
          "less than a third of the callee's traps" % (100 * nm, 100 * un, 100 * m))
    bad = True
sys.exit(1 if bad else 0)
PY
