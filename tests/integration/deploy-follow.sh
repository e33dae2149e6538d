#!/bin/sh
# A deploy under -x, at the default settings: a new build is renamed over
# the traced path (as dpkg and deploy tools do) while the old instance
# still runs, then a new instance starts from the path.
# - retop says so in one line, and traces the new file too: the new
#   instance's 1,000 calls are counted exactly;
# - the old instance is unharmed: it keeps running and its later calls
#   are counted (its probes stay on the old file while it runs);
# - each file's RET sites count its own instance's calls;
# - the targets are both processes, by the files they run;
# - --serve keeps its series: one retop_function_calls_total series for
#   main.Work before and after, equal to every call made; the new file's
#   RET sites carry binary_index="1", and promtool accepts the page;
# - once the old instance exits, the old file gives up its probes, and the
#   new instance is still counted exactly.
# The two files differ in layout (default and noopt builds), so a probe at
# an offset approved for the other would miscount or crash.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd promtool
need_retop
need_fixture lifecycle-default lifecycle-noopt
app=$T/app
cp "$FIXTURES/lifecycle-default" "$app"

snap=$T/snap
# -v: the line that says when the old file gives up its probes.
"$RETOP" -b -v -x "$app" -t main.Work -t main.Hold -d 0.3 -o json >"$snap" 2>"$T/err" &
rp=$!
track_pid "$rp"
start_serve 19300 19399 -x "$app" -t main.Work -d 0.3
url=http://127.0.0.1:$PORT/metrics
sc wait "$snap" 1 15 "$rp" || fail "retop did not attach: $(head -n 3 "$T/err")"
# The calls start once --serve's probes are in, or they go by uncounted
# (calls_total 0 in a loaded parallel run).
serve_ready
series() {
    pq get "$url" | grep '^retop_function_calls_total{' | grep 'function="main.Work"'
}
# calls_total of main.Work on /metrics, once it reads $1 (10 s at most).
serve_calls() {
    n=0
    while :; do
        line=$(series)
        [ "$(echo "$line" | wc -l)" -eq 1 ] || fail "/metrics has $(echo "$line" | wc -l) series for main.Work: $line"
        [ "${line##* }" = "$1" ] && return 0
        [ "$n" -lt 100 ] || fail "/metrics: main.Work calls_total is ${line##* }, expected $1"
        n=$((n + 1))
        sleep 0.1
    done
}

# launch NAME CALLS: an instance from the path as it is now, each SIGUSR1 a
# round of CALLS calls; its PID in $LAUNCHED.  round NAME PID: one round.
launch() {
    "$app" -ready "$T/$1.ready" -calls "$2" -out "$T/$1.out" &
    LAUNCHED=$!
    track_pid "$LAUNCHED"
    wait_file "$T/$1.ready" 10 || fail "the $1 instance did not start"
}
round() {
    rm -f "$T/$1.out"
    kill -USR1 "$2"
    wait_file "$T/$1.out" 10 || fail "no result from the $1 instance's round"
}

# The old instance: 500 calls.
launch old 500
old=$LAUNCHED
round old "$old"
sc waitfor "$snap" main.Work calls 500 5 "$rp" || fail "the old instance's 500 calls were not counted"
serve_calls 500
before=$(series)
before=${before% *}

# The deploy: the new build renamed over the path.
cp "$FIXTURES/lifecycle-noopt" "$app.new"
mv "$app.new" "$app"
n=0
until grep -q "was replaced (a deploy): tracing 2 of 2 functions in the new binary too" "$T/err" &&
    grep -q "was replaced (a deploy): tracing 1 of 1 functions" "$T/serve.err"; do
    [ "$n" -lt 50 ] || fail "retop did not follow the deploy: $(tail -n 2 "$T/err") / $(tail -n 2 "$T/serve.err")"
    n=$((n + 1))
    sleep 0.1
done
[ "$(grep -c 'was replaced' "$T/err")" -eq 1 ] || fail "more than one line about the deploy: $(cat "$T/err")"

# The new instance: 1,000 calls; then the old one again: 500 more.
launch new 1000
new=$LAUNCHED
round new "$new"
round old "$old"
sc waitfor "$snap" main.Work calls 2000 5 "$rp" ||
    fail "$(sc get "$snap" main.Work calls) calls after the deploy; expected 500 + 1000 + 500"
sc wait-targets "$snap" 5 "$rp" "$old" "$new" || fail "the targets are not both instances"
serve_calls 2000
after=$(series)
[ "${after% *}" = "$before" ] || fail "--serve changed main.Work's series across the deploy: $before, then ${after% *}"
# Both files' RET sites, told apart, in a page Prometheus accepts.
pq get "$url" >"$T/page"
promtool check metrics <"$T/page" >"$T/promtool" 2>&1 ||
    fail "promtool check metrics after the deploy: $(head -n 5 "$T/promtool")"
grep -q '^retop_ret_site_hits_total{function="main.Work",.*binary_index="1"} 1000$' "$T/page" ||
    fail "no RET site of the new file with its 1000 hits on /metrics: $(grep ret_site_hits "$T/page")"
python3 - "$snap" "$T/old.out" "$T/new.out" <<'PY' || fail "after the deploy"
import json, sys
snap = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
old, new = (json.load(open(p)) for p in sys.argv[2:4])
f = {x["name"]: x for x in snap["functions"]}["main.Work"]
bad = []
if (old["calls"], old["rounds"], new["calls"]) != (1000, 2, 1000):
    bad.append("the instances made %d calls in %d rounds and %d" % (old["calls"], old["rounds"], new["calls"]))
hits = {}
for s in f["ret_sites"]:
    hits[s["binary_index"]] = hits.get(s["binary_index"], 0) + s["hits"]
if hits != {0: old["calls"], 1: new["calls"]}:
    bad.append("RET hits by binary %s; expected {0: %d, 1: %d}" % (hits, old["calls"], new["calls"]))
for k in ("in_flight", "orphans", "unmatched_returns", "dropped"):
    if f[k]:
        bad.append("%s is %d" % (k, f[k]))
if f["status"] != "tracing":
    bad.append("status %r" % f["status"])
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# The old instance was unharmed: it exits cleanly, and the new one is
# still counted once the old file gave up its probes.
kill -TERM "$old"
wait "$old" || fail "the old instance exited $? under tracing"
sc wait-targets "$snap" 5 "$rp" "$new" || fail "the targets after the old instance exited"
grep -q "no process runs binary 0 .* any more: its probes are out" "$T/err" ||
    fail "the old file kept its probes after its last process exited"
round new "$new"
sc waitfor "$snap" main.Work calls 3000 5 "$rp" ||
    fail "$(sc get "$snap" main.Work calls) calls after the old instance exited; expected 3000"
serve_calls 3000
echo "deploy under -x: followed in one line; 500 + 1000 (new) + 500 (old, unharmed) + 1000 counted exactly, one series on /metrics"
