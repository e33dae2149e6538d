#!/bin/sh
# Every runtime.* function of two real programs, traced in groups under
# load: the target survives every group, and every function `retop -l`
# calls "full" attaches with its RETs ("tracing"), every "entry-only" one
# attaches entry-only, every "no" one is refused with the listing's reason.
#   - Debian's Prometheus, scraping itself every 100 ms while two clients
#     query its HTTP API without pause; alive = it answers /-/healthy and
#     its own clock (the time() of a query) keeps up with ours;
#   - churn built with Go 1.27 (allocation, GC every 100 ms, goroutines,
#     channels, timers, JSON, recovered panics); alive = its heartbeat file,
#     written with its own clock every 50 ms, keeps moving.
# Groups are runtime.* name prefixes packed up to 1000 functions (a whole
# package traced at once, as an operator would: --max-functions 1024); each
# group is traced for 1 s, two snapshots 0.5 s apart (RETOP_RUNTIME_SECONDS
# sets the interval; set
# RETOP_RUNTIME_LONG=1 for three rounds of 20 s per group, RETOP_RUNTIME_ALL=1
# to trace every function of both binaries, not only runtime.*: run once on
# Prometheus, 62,832 functions in groups of up to 1,000, all attached as listed).
# Before the interlock, one group (runtime.gcWriteBarrierR8's) killed
# Prometheus every time: `49 90` (xchg rax, r8) ran as a NOP under a uprobe.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd prometheus
need_retop

secs=${RETOP_RUNTIME_SECONDS:-0.5}
rounds=1
root=runtime.
# Every function of both binaries, not only the runtime's (about 30 min).
[ -z "${RETOP_RUNTIME_ALL:-}" ] || root=
if [ -n "${RETOP_RUNTIME_LONG:-}" ]; then
    secs=10
    rounds=3
fi

# ---- churn with Go 1.27, built once into the fixtures directory
churn=$FIXTURES/churn-go1.27
src=$abs_top_srcdir/tests/go/churn
if [ ! -x "$churn" ] || [ -n "$(find "$src" -newer "$churn" -print | head -n 1)" ]; then
    goroot=$("$abs_top_srcdir/scripts/go-toolchain" 1.27) ||
        fail "scripts/go-toolchain 1.27 found no Go 1.27 (see its message above)"
    (cd "$src" && env GOCACHE="$FIXTURES/.gocache" GOPATH="$FIXTURES/.gopath" GOENV=off \
        GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off CGO_ENABLED=0 \
        "$goroot/bin/go" build -o "$churn.$$.tmp" . && mv -f "$churn.$$.tmp" "$churn") ||
        fail "building tests/go/churn with Go 1.27 failed"
fi

# groups LIST: one line per group, "-t PREFIX* ..." packed up to 1000
# functions (of --max-functions 1024), from the listing's runtime.* names.
groups() {
    python3 - "$1" "$root" <<'EOF'
import collections, json, sys
root = sys.argv[2]
names = [json.loads(l)["name"] for l in open(sys.argv[1])]
names = [n for n in names if n.startswith(root) and "'" not in n]
# Prefixes one character longer than the root, longer still where one
# holds too many functions.
def split(prefix, pool):
    by = collections.Counter(n[:len(prefix) + 1] for n in pool)
    out = []
    for p, k in sorted(by.items()):
        if k > 1000 and len(p) > len(prefix):
            out += split(p, [n for n in pool if n.startswith(p)])
        else:
            out.append((p, k))
    return out
prefixes = split(root, names)
def glob(prefix):  # the prefix itself, literally
    return "".join("\\" + c if c in "*?[\\" else c for c in prefix)
group, total = [], 0
for p, k in prefixes:
    if total + k > 1000 and group:
        print(" ".join("-t '%s*'" % glob(g) for g in group))
        group, total = [], 0
    group.append(p)
    total += k
if group:
    print(" ".join("-t '%s*'" % glob(g) for g in group))
EOF
}

# verdicts LIST SNAP: every function of the last snapshot has the status
# its listing promised; prints "full/entry-only/refused" counts.
verdicts() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
# Duplicate names (ABI wrappers) are listed and traced in entry order.
listing = {}
for l in open(sys.argv[1]):
    o = json.loads(l)
    listing.setdefault(o["name"], []).append(o)
snaps = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
if not snaps:
    sys.exit("no snapshot")
n = {"full": 0, "entry-only": 0, "no": 0}
bad = []
seen = {}
for f in snaps[-1]["functions"]:
    k = seen.get(f["name"], 0)
    seen[f["name"]] = k + 1
    o = listing[f["name"]][k]
    want = o["traceable"]
    st = f["status"].split("; errors not counted: ")[0]
    # Attached with its RETs: in full, or with the budget's sampling.
    ok = (want == "full" and (st == "tracing" or st.startswith("timing-sampled ") or
                              st.startswith("sampled "))) or \
         (want == "entry-only" and st.startswith("entry-only")) or \
         (want == "no" and st.startswith("error: ") and o["reason"][:40] in st)
    n[want] += 1
    if not ok:
        bad.append("%s (0x%x): listed %s (%s), status '%s'" % (f["name"], o["entry"], want, o["reason"], st))
if bad:
    sys.exit("\n".join(bad[:10]))
print("%d full tracing, %d entry-only, %d refused" % (n["full"], n["entry-only"], n["no"]))
EOF
}

# trace_groups LABEL PID LIST ALIVE-CMD: every group in turn; ALIVE-CMD
# fails when the target is not alive and working.
trace_groups() {
    label=$1 pid=$2 list=$3 alive=$4 i=0 summary=""
    groups "$list" >"$T/$label.groups"
    [ -s "$T/$label.groups" ] || fail "$label: no runtime.* function listed"
    while read -r pats; do
        i=$((i + 1))
        snap=$T/$label.$i.snap
        eval "set -- $pats"
        "$RETOP" -b -p "$pid" --max-functions 1024 "$@" -d "$secs" -n 2 -o json \
            >"$snap" 2>"$T/$label.$i.err"
        rc=$?
        kill -0 "$pid" 2>/dev/null || fail "$label: the target died while tracing group $i ($pats)"
        [ "$rc" -eq 0 ] || fail "$label: retop exited $rc on group $i ($pats): $(head -n 3 "$T/$label.$i.err")"
        $alive || fail "$label: the target stopped working after group $i ($pats)"
        v=$(verdicts "$list" "$snap") || fail "$label: group $i ($pats): $v"
        summary="$summary
  $label group $i ($pats): $v"
    done <"$T/$label.groups"
    echo "$label: $i groups, target alive after each:$summary"
}

# ---- Prometheus under load
pport=$(python3 "$abs_top_srcdir/tests/integration/promq.py" freeport 19200 19299) ||
    fail "no free port for Prometheus"
PROM=http://127.0.0.1:$pport
cat >"$T/prom.yml" <<EOF
global:
  scrape_interval: 100ms
  scrape_timeout: 100ms
  evaluation_interval: 1s
scrape_configs:
  - job_name: self
    static_configs:
      - targets: ['127.0.0.1:$pport']
EOF
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$T/prom.err" 2>&1 &
prom=$!
track_pid "$prom"
python3 "$abs_top_srcdir/tests/integration/promq.py" wait "$PROM" 'up{job="self"}' 30 >/dev/null ||
    fail "Prometheus did not start: $(head -n 3 "$T/prom.err")"
# Two clients without pause: the HTTP API, PromQL, the TSDB.
python3 - "$PROM" <<'EOF' &
import sys, threading, urllib.request
base = sys.argv[1]
paths = ["/metrics", "/api/v1/query?query=rate(prometheus_http_requests_total[1s])",
         "/api/v1/query?query=up", "/api/v1/label/__name__/values"]
def loop(k):
    i = k
    while True:
        try:
            urllib.request.urlopen(base + paths[i % len(paths)], timeout=5).read()
        except Exception:
            pass
        i += 1
for k in range(2):
    threading.Thread(target=loop, args=(k,), daemon=True).start()
threading.Event().wait()
EOF
track_pid $!

prom_alive() {
    python3 "$abs_top_srcdir/tests/integration/promq.py" get "$PROM/-/healthy" >/dev/null || return 1
    t=$(python3 "$abs_top_srcdir/tests/integration/promq.py" query "$PROM" 'vector(time())') || return 1
    python3 -c "import sys, time; sys.exit(abs(float(sys.argv[1]) - time.time()) > 5)" "$t"
}

"$RETOP" -l -x "$(readlink -f "$(command -v prometheus)")" -o json >"$T/prom.list" ||
    fail "retop -l on Prometheus failed"
r=1
while [ "$r" -le "$rounds" ]; do
    trace_groups prometheus "$prom" "$T/prom.list" prom_alive
    r=$((r + 1))
done

# ---- churn (Go 1.27)
rm -f "$T/churn.ready"
"$churn" -ready "$T/churn.ready" -beat "$T/churn.beat" &
cpid=$!
track_pid "$cpid"
wait_file "$T/churn.ready" 10 || fail "churn did not start"
wait_file "$T/churn.beat" 5 || fail "churn wrote no heartbeat"

# Alive and working: a new heartbeat within 2 s, its clock within 2 s of
# ours, and more work done than at the last look.
churn_alive() {
    python3 - "$T/churn.beat" "$T/churn.last" <<'EOF'
import os, sys, time
beat, last = sys.argv[1], sys.argv[2]
prev = int(open(last).read()) if os.path.exists(last) else -1
deadline = time.time() + 2
while time.time() < deadline:
    n, ns, work = map(int, open(beat).read().split())
    if abs(ns / 1e9 - time.time()) < 2 and work > prev:
        open(last, "w").write(str(work))
        sys.exit(0)
    time.sleep(0.05)
sys.exit("heartbeat %s: %s (work before: %d)" % (beat, open(beat).read().strip(), prev))
EOF
}

"$RETOP" -l -x "$churn" -o json >"$T/churn.list" || fail "retop -l on churn failed"
r=1
while [ "$r" -le "$rounds" ]; do
    trace_groups churn-go1.27 "$cpid" "$T/churn.list" churn_alive
    r=$((r + 1))
done
kill -TERM "$cpid"
if wait "$cpid"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "churn exited $rc after SIGTERM"
kill -TERM "$prom"
if wait "$prom"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "Prometheus exited $rc after SIGTERM"
