#!/bin/sh
# Go's write barriers traced in esbuild from the npm registry (Go 1.20.4 and
# 1.26.5) while its dev server builds a bundle big enough to keep the garbage
# collector busy.  On Go <= 1.20, runtime.gcWriteBarrierR8 begins with
# `49 90` (xchg rax, r8), which the kernel's uprobe code emulates as a NOP:
# a probe there corrupts the target.  Whatever retop traces or refuses, the
# target must live and answer every build right, the write barriers retop
# does trace must have run (the test is not vacuous), every function retop
# lists for the pattern is traced or says why not, and ServeHTTP, traced
# alongside, counts exactly one call per request.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../realbin/lib.sh
. "$abs_top_srcdir/tests/realbin/lib.sh"
need_root
need_cmd python3
need_retop

N=5
serve='github.com/evanw/esbuild/pkg/api.(*apiHandler).ServeHTTP'
for v in 0.17.19 0.28.2; do
    realbin_fetch "esbuild-$v"
    d=$T/$v
    mkdir -p "$d"
    # 5,000 exported functions of object and array literals: every build
    # allocates enough for several GC cycles, so the barriers run.
    python3 - "$d/big.js" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(5000):
        f.write('export function f%d(a) { return {k%d: [a, %d, "s%d"], n: a + %d} }\n' % (i, i, i, i, i))
PY
    printf '%s\n' "import * as big from './big.js'" "import { greet } from './lib.js'" \
        "console.log(greet('retop'), Object.keys(big).length)" >"$d/app.js"
    realbin_esbuild_serve "$d" app.js
    ep=$ESBUILD_PID

    retop_batch "$d/snap" -p "$ep" -t 'runtime.gcWriteBarrier*' -t "$(printf '%s\n' "$serve" | sed 's/\*/[*]/g')" \
        -d 0.2

    python3 "$REALBIN/esbuild-builds.py" "$ESBUILD_URL" "$d/lib.js" "$N" "$d/builds.json" "$serve" \
        2>"$d/builds.err" || true
    if ! kill -0 "$ep" 2>/dev/null; then
        fail "esbuild $v died while retop traced runtime.gcWriteBarrier*: \
$(grep -m 2 -E '^panic:|fatal error|signal SIG|unexpected' "$d/serve.log" | tr '\n' ' ')"
    fi
    [ ! -s "$d/builds.err" ] || fail "esbuild $v answered a build wrong: $(head -n 3 "$d/builds.err")"
    retop_snapshots 2
    retop_stop

    python3 - "$d/snap" "$d/builds.json" "$serve" <<'PY' || fail "esbuild $v: retop's last snapshot is wrong (above)"
import json, sys
snap = json.loads(open(sys.argv[1]).read().strip().split("\n")[-1])
requests = json.load(open(sys.argv[2]))["requests"]
serve = sys.argv[3]
fs = [f for f in snap["functions"] if f["name"] != serve]
bad = []
sv = [f for f in snap["functions"] if f["name"] == serve]
if len(sv) != 1 or sv[0]["state"] != "tracing" or sv[0]["calls"] != requests:
    bad.append("ServeHTTP: %s, expected tracing with %d calls" % (
        ["%s %s calls" % (f["status"], f["calls"]) for f in sv], requests))
if not fs:
    bad.append("no function listed for runtime.gcWriteBarrier*")
traced, ran = 0, 0
for f in fs:
    st = f.get("status") or ""
    if f.get("state") == "tracing" or st.startswith("entry-only"):
        traced += 1
        ran += f["calls"]
    elif st.startswith("detached") or len(st.split(":", 1)[-1].strip()) == 0:
        bad.append("%s: status %r: neither traced nor refused with a reason" % (f["name"], st))
if traced and ran == 0:
    bad.append("no traced write barrier ran in %d requests: the test proves nothing" % requests)
for b in bad:
    print("realbin-writebarrier: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
    echo "esbuild $v: alive after $N builds; $(python3 -c 'import json,sys
fs = json.loads(open(sys.argv[1]).read().strip().split("\n")[-1])["functions"]
print(", ".join("%s %s (%s)" % (f["name"].split(".")[-1], f["calls"], f["status"]) for f in fs))' "$d/snap")"
    exec 3>&-
    cleanup_pids
done
exit 0
