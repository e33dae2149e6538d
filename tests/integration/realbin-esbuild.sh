#!/bin/sh
# esbuild from the npm registry (not built here: Go 1.20.4 and 1.26.5, and
# 1.20.12 on request, stripped): its dev server (esbuild --serve) answers N builds, each
# with an edited module, while retop traces it.  Per build esbuild runs
# (*internalContext).rebuild once, and in it bundler.ScanBundle then
# (*Bundle).Compile once; per request ServeHTTP once: retop counts exactly
# as many, with nothing in flight, orphaned or unmatched; the durations nest
# as the calls do and fit inside the client's round trips; esbuild survives
# and still answers right after retop has gone.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../realbin/lib.sh
. "$abs_top_srcdir/tests/realbin/lib.sh"
need_root
need_cmd python3
need_retop

N=10
A=github.com/evanw/esbuild/pkg/api
B=github.com/evanw/esbuild/internal/bundler
serve="$A.(*apiHandler).ServeHTTP"
rebuild="$A.(*internalContext).rebuild"
scan="$B.ScanBundle"
compile="$B.(*Bundle).Compile"

# glob PATTERN: a name with its '*' quoted, for retop -t.
glob() { printf '%s\n' "$1" | sed 's/\*/[*]/g'; }

# run VERSION: the whole check on one esbuild.
run() {
    v=$1 d=$T/$1
    realbin_fetch "esbuild-$v"
    mkdir -p "$d"
    printf '%s\n' "import { greet } from './lib.js'" "console.log(greet('retop'))" >"$d/app.js"
    realbin_esbuild_serve "$d" app.js
    ep=$ESBUILD_PID url=$ESBUILD_URL

    retop_batch "$d/snap" -p "$ep" -t "$(glob "$serve")" -t "$(glob "$rebuild")" -t "$scan" \
        -t "$(glob "$compile")" -d 0.2
    sc status "$d/snap" tracing "$serve" "$rebuild" "$scan" "$compile" ||
        fail "esbuild $v: not every function is traced: $(retop_err)"

    python3 "$REALBIN/esbuild-builds.py" "$url" "$d/lib.js" "$N" "$d/builds.json" \
        "$serve" "$rebuild" "$scan" "$compile" || fail "esbuild $v answered a build wrong"
    # A snapshot taken after the last answer holds every call.
    retop_snapshots 2
    retop_stop

    sc exact "$d/snap" "$d/builds.json" "$serve" "$rebuild" "$scan" "$compile" ||
        fail "esbuild $v: $N builds, retop's counts differ (above)"
    python3 - "$d/snap" "$d/builds.json" "$serve" "$rebuild" "$scan" "$compile" <<'PY' ||
import json, sys
snap = json.loads(open(sys.argv[1]).read().strip().split("\n")[-1])
rt = json.load(open(sys.argv[2]))["rt_ns"]
f = {x["name"]: x for x in snap["functions"]}
serve, rebuild, scan, compile_ = (f[n] for n in sys.argv[3:])
# Total time in a function; mean_ns is rounded, hence the slack of one
# nanosecond per call.
def total(x):
    return x["mean_ns"] * x["calls"]
def slack(*xs):
    return sum(x["calls"] for x in xs)
bad = []
# Each call runs inside the one above it, and each request's ServeHTTP
# inside the client's round trip for that request: the totals nest.
if not serve["max_ns"] <= max(rt):
    bad.append("ServeHTTP max %d ns > the client's longest round trip %d ns" % (serve["max_ns"], max(rt)))
if not total(serve) <= sum(rt) + slack(serve):
    bad.append("ServeHTTP total %d ns > the client's round trips %d ns" % (total(serve), sum(rt)))
if not total(rebuild) <= total(serve) + slack(serve, rebuild):
    bad.append("rebuild total %d ns > ServeHTTP total %d ns, which calls it" % (total(rebuild), total(serve)))
if not total(scan) + total(compile_) <= total(rebuild) + slack(scan, compile_, rebuild):
    bad.append("ScanBundle + Compile totals %d + %d ns > rebuild total %d ns, which runs both" % (
        total(scan), total(compile_), total(rebuild)))
for x in (serve, rebuild, scan, compile_):
    if not 0 < x["mean_ns"] <= x["max_ns"]:
        bad.append("%s: mean %d ns, max %d ns" % (x["name"], x["mean_ns"], x["max_ns"]))
for b in bad:
    print("realbin-esbuild: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
        fail "esbuild $v: durations that cannot be (above)"

    # Unharmed: the same process builds and answers once more.
    kill -0 "$ep" 2>/dev/null || fail "esbuild $v died under tracing: $(tail -n 3 "$d/serve.log")"
    if ! python3 "$abs_top_srcdir/tests/integration/promq.py" get "$url" >"$d/after.js" 2>&1 ||
        ! grep -q "<retop-build-$N>" "$d/after.js"; then
        fail "esbuild $v does not answer right after retop detached: $(head -c 300 "$d/after.js")"
    fi
    echo "esbuild $v: $N builds in $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$d/builds.json") requests; ServeHTTP/rebuild/ScanBundle/Compile $(sc get "$d/snap" "$serve" calls)/\
$(sc get "$d/snap" "$rebuild" calls)/$(sc get "$d/snap" "$scan" calls)/$(sc get "$d/snap" "$compile" calls) calls, \
means $(sc get "$d/snap" "$serve" mean_ns)/$(sc get "$d/snap" "$rebuild" mean_ns)/\
$(sc get "$d/snap" "$scan" mean_ns)/$(sc get "$d/snap" "$compile" mean_ns) ns"
    exec 3>&-
    cleanup_pids
}

# The oldest Go (1.20.4) and the newest (1.26.5) by default; the one
# between (0.21.5, Go 1.20.12) with ESBUILD_VERSIONS="0.17.19 0.21.5 0.28.2".
for v in ${ESBUILD_VERSIONS:-0.17.19 0.28.2}; do
    run "$v"
done
exit 0
