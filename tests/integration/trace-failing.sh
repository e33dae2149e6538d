#!/bin/sh
# Failing calls, exactly.  tests/go/failing has functions returning error,
# (int, error) and (string, error), and one returning a nil pointer as an
# error, each failing on a known share of its calls and counting its own
# failures as Go sees them (err != nil), by caller and by type (%T).  Traced
# at retop's defaults, each function's errors are the program's, exact, and
# so are its failing share, each caller's errors (main.Fail from main.viaA
# and main.viaB) and each type's (the typed nil pointer's too); its failing
# and succeeding calls' durations come apart: Count fails slow (3 ms, its
# other calls 1 ms), Fail fails fast (its failing p50 under a tenth of its
# succeeding p50, which is the program's within 10%).  On Go 1.19 (the
# system's) and 1.27 (scripts/go-toolchain), each in the default, the
# externally linked (cgo) and the PIE build.  The text's ERR% cell, and
# /metrics' retop_function_errors_total and retop_caller_errors_total, say
# the same.  Stripped and without an SDK, the status says the signature is
# unknown and nothing is counted; through the SDK (sdkapp, stripped), the
# errors of main.Check (int, error) and their type are counted.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture failing-default failing-cgo failing-pie failing-stripped sdkapp-stripped

funcs="main.Fail main.Count main.Name main.TypedNil"
targs=$(for f in $funcs; do printf ' -t %s' "$f"; done)

# check LABEL: the last snapshot of $SNAP against the fixture's $OUT.
check() {
    # shellcheck disable=SC2086 # $funcs is a list
    python3 - "$SNAP" "$OUT" "$1" $funcs <<'EOF' || fail "$1: retop's errors are not the program's"
import json, sys
snap_path, out_path, label, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
snap = [json.loads(l) for l in open(snap_path) if l.strip()][-1]
fx = json.load(open(out_path))
got = {f["name"]: f for f in snap["functions"]}
bad, line = [], []
for n in names:
    f, calls, errors = got.get(n), fx["per_func"][n]["calls"], fx["errors"][n]
    if not f:
        bad.append("%s: not in the snapshot" % n)
        continue
    if f["status"] != "tracing" or f["calls"] != calls or f["errors"] != errors:
        bad.append("%s: %s, %s calls, %s errors; the program made %d calls, %d failed" %
                   (n, f["status"], f["calls"], f["errors"], calls, errors))
        continue
    if not f["errors_exact"] or f["returns_error"] is not True or f["errors_uncounted_why"]:
        bad.append("%s: errors_exact %s, returns_error %s, why %r" %
                   (n, f["errors_exact"], f["returns_error"], f["errors_uncounted_why"]))
    if abs(f["error_share"] - errors / calls) > 1e-6:
        bad.append("%s: error_share %s, the program's %d/%d" % (n, f["error_share"], errors, calls))
    if f["failing"]["calls"] != errors or f["succeeding"]["calls"] != calls - errors:
        bad.append("%s: failing %d and succeeding %d calls" %
                   (n, f["failing"]["calls"], f["succeeding"]["calls"]))
    types = {t["type"]: t["errors"] for t in f["error_types"]}
    if types != fx["error_types"][n]:
        bad.append("%s: error types %s, the program's %s" % (n, types, fx["error_types"][n]))
    by = {c["name"]: c["errors"] for c in f["callers"] if c["errors"]}
    want = fx["caller_errors"][n]
    if want and by != want:
        bad.append("%s: errors by caller %s, the program's %s" % (n, by, want))
    if sum(c["errors"] for c in f["callers"]) != errors:
        bad.append("%s: its callers' errors add up to %d, not %d" %
                   (n, sum(c["errors"] for c in f["callers"]), errors))
    line.append("%s %d/%d" % (n, f["errors"], errors))
# Durations apart, against the program's own clock: Count's slow failures,
# Fail's calls that succeed (2 ms) and its fast failures.
p = fx["per_func"]
def near(a, b):
    return abs(a - b) <= 0.10 * b
count, fail = got.get("main.Count"), got.get("main.Fail")
if count and not near(count["failing"]["p50_ns"], p["main.Count/failing"]["p50_ns"]):
    bad.append("main.Count: failing p50 %d ns, the program's %d" %
               (count["failing"]["p50_ns"], p["main.Count/failing"]["p50_ns"]))
if count and not near(count["succeeding"]["p50_ns"], p["main.Count/succeeding"]["p50_ns"]):
    bad.append("main.Count: succeeding p50 %d ns, the program's %d" %
               (count["succeeding"]["p50_ns"], p["main.Count/succeeding"]["p50_ns"]))
if fail and not near(fail["succeeding"]["p50_ns"], p["main.Fail/succeeding"]["p50_ns"]):
    bad.append("main.Fail: succeeding p50 %d ns, the program's %d" %
               (fail["succeeding"]["p50_ns"], p["main.Fail/succeeding"]["p50_ns"]))
if fail and not fail["failing"]["p50_ns"] * 10 < fail["succeeding"]["p50_ns"]:
    bad.append("main.Fail: its fast failures' p50 %d ns is not under a tenth of %d ns" %
               (fail["failing"]["p50_ns"], fail["succeeding"]["p50_ns"]))
print("%s: %s; Count failing p50 %.2f ms (the program's %.2f), Fail failing p50 %d ns" %
      (label, ", ".join(line), count["failing"]["p50_ns"] / 1e6 if count else 0,
       p["main.Count/failing"]["p50_ns"] / 1e6, fail["failing"]["p50_ns"] if fail else 0))
for b in bad:
    print("%s: %s" % (label, b), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

# trace LABEL FIXTURE: the fixture traced at the defaults, checked.
trace() {
    # shellcheck disable=SC2086 # $targs is a list
    trace_fixture "$2" -calls 200 -workers 4 -- $targs -d 0.2
    check "$1"
    kill "$FIXTURE_PID"
    wait "$FIXTURE_PID"
}

for v in default cgo pie; do
    trace "go1.19 $v" "failing-$v"
done

# ---- the text: main.Fail's ERR% cell, as the program's share rounds
start_fixture failing-default -calls 200 -out "$T/text.out"
# shellcheck disable=SC2086 # $targs is a list
"$RETOP" -b -p "$FIXTURE_PID" $targs -d 1 >"$T/text" 2>"$T/text.err" &
rp=$!
track_pid "$rp"
text_started "$T/text" "$rp"
# The calls, then one snapshot more once the program reported them done:
# three snapshots could end before a loaded machine finished the calls.
fixture_go "$T/text.out"
text_stop "$T/text" "$rp"
python3 - "$T/text" "$T/text.out" <<'EOF' || fail "the text's ERR% is not the program's share"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
fx = json.load(open(sys.argv[2]))
title = [l.split() for l in lines if l.startswith("FUNCTION ")][-1]
row = [l.split() for l in lines if l.startswith("main.Fail ")][-1]
share = 100 * fx["errors"]["main.Fail"] / fx["per_func"]["main.Fail"]["calls"]
want = "%.0f%%" % share if share >= 9.95 else "%.1f%%" % share
got = row[title.index("ERR%")]
long = [l for l in lines if len(l) > 80]
if got != want or long:
    sys.exit("main.Fail's ERR%% cell %r, the program's share %r; lines over 80 columns: %r" % (got, want, long[:3]))
EOF
kill "$FIXTURE_PID"
wait "$FIXTURE_PID"

# ---- /metrics: the same counts, per function and per caller
start_fixture failing-default -calls 200 -out "$T/serve.out"
fixture=$FIXTURE_PID
# shellcheck disable=SC2086 # $targs is a list
start_serve 19600 19699 -p "$fixture" $targs -d 0.2
# The program starts once the probes are in, or its calls go by untraced.
serve_ready
kill -USR1 "$fixture"
wait_file "$T/serve.out" 30 || fail "no result from the fixture behind --serve"
n=50
while :; do
    pq get "http://127.0.0.1:$PORT/metrics" >"$T/metrics" || fail "no /metrics"
    python3 - "$T/metrics" "$T/serve.out" <<'EOF' && break
import json, re, sys
page, fx = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
def val(name, fn, caller=None):
    lbl = 'function="%s"' % fn
    for l in page.splitlines():
        if l.startswith(name + "{") and lbl in l and (caller is None or 'caller="%s"' % caller in l):
            return int(float(l.rsplit(" ", 1)[1]))
    return None
ok = all(val("retop_function_errors_total", f) == n for f, n in fx["errors"].items())
ok = ok and all(val("retop_caller_errors_total", "main.Fail", c) == n
                for c, n in fx["caller_errors"]["main.Fail"].items())
sys.exit(0 if ok else 1)
EOF
    [ $n -gt 0 ] || fail "/metrics: errors_total or caller_errors_total never reached the program's $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["errors"])' "$T/serve.out"): $(grep errors_total "$T/metrics" | head -n 8)"
    n=$((n - 1))
    sleep 0.1
done
term_exits_0 "$RP" 5 "retop --serve"

# ---- stripped, no SDK: the signature is unknown, and said so
trace_fixture failing-stripped -calls 40 -- -t main.Fail -t main.Count -d 0.2
python3 - "$SNAP" <<'EOF' || fail "stripped: the status does not say the signature is unknown"
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
for f in last["functions"]:
    want = "tracing; errors not counted: signature unknown (stripped, no SDK)"
    if f["status"] != want or f["errors"] is not None or f["returns_error"] is not None:
        sys.exit("%s: status %r, errors %s, returns_error %s" %
                 (f["name"], f["status"], f["errors"], f["returns_error"]))
EOF
kill "$FIXTURE_PID"
wait "$FIXTURE_PID"

# ---- stripped, through the SDK: main.Check (int, error) of sdkapp
port=$(pq freeport 19700 19799) || fail "no free port"
start_fixture sdkapp-stripped -sdk "127.0.0.1:$port" -calls 4 -workers 2 -out "$T/sdk.out"
retop_batch "$T/sdk.snap" -p "$FIXTURE_PID" -s "http://127.0.0.1:$port" -t main.Check -d 0.2
fixture_go "$T/sdk.out"
retop_snapshots 1
retop_stop "$FIXTURE_PID"
sdk=$(python3 - "$T/sdk.snap" "$T/sdk.out" <<'EOF'
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
fx = json.load(open(sys.argv[2]))["check"]
f = [f for f in last["functions"] if f["name"] == "main.Check"][0]
types = {t["type"]: t["errors"] for t in f["error_types"]}
if (f["calls"], f["errors"], f["status"]) != (fx["calls"], fx["errors"], "tracing") or \
        types != {"*errors.errorString": fx["errors"]}:
    sys.exit("main.Check through the SDK: %s, %s calls, %s errors of types %s; the program: %s" %
             (f["status"], f["calls"], f["errors"], types, fx))
print("stripped through the SDK: main.Check %d/%d errors, *errors.errorString" % (f["errors"], fx["errors"]))
EOF
) || fail "$sdk"
echo "$sdk"

# ---- Go 1.27: the same three builds
rel=1.27
goroot=$("$abs_top_srcdir/scripts/go-toolchain" "$rel") ||
    skip "Go $rel not available from Debian's mirror (scripts/go-toolchain $rel)"
mkdir -p "$T/go$rel"
for v in default cgo pie; do
    case $v in
    default) set -- CGO_ENABLED=0 ;;
    cgo) set -- CGO_ENABLED=1 ;;
    pie) set -- CGO_ENABLED=0 ;;
    esac
    flags=""
    [ "$v" != cgo ] || flags="-tags retop_cgo"
    [ "$v" != pie ] || flags="-buildmode=pie"
    # shellcheck disable=SC2086 # $flags is a list
    (cd "$abs_top_srcdir/tests/go/failing" && env GOCACHE="$abs_top_builddir/tests/go/bin/.gocache" \
        GOPATH="$abs_top_builddir/tests/go/bin/.gopath" GOENV=off GOTOOLCHAIN=local GOPROXY=off \
        GOFLAGS=-mod=mod "$@" "$goroot/bin/go" build $flags -o "$T/go$rel/failing-go$rel-$v" .) \
        >"$T/build.err" 2>&1 || fail "go $rel build ($v) failed: $(head -n 5 "$T/build.err")"
done
FIXTURES=$T/go$rel
for v in default cgo pie; do
    trace "go$rel $v" "failing-go$rel-$v"
done
