#!/bin/sh
# Time to attach 64 functions: retop -b -p PID -t f1 ... -t f64 -n 1 -d 0.05
# on the running demo fixture, wall time to the first snapshot (index + BPF
# load + attach + one 0.05 s interval), and the time retop then takes to exit
# (mostly the kernel letting go of the uprobes). Side by side, the floor:
# noop_probe attaching and detaching no-op programs at the same offsets.
# Functions: fully traceable ones of main, strconv, sort, strings and fmt
# (not the runtime's own), without glob characters in their names
# (pick_functions in lib.sh).
#
# Environment: R (3), NFUNCS (64), VARIANT (demo-VARIANT, default),
# abs_top_builddir (default SRCDIR/build), BENCH_BUILD.
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

R=${R:-3}
NFUNCS=${NFUNCS:-64}
FIX=demo-${VARIANT:-default}
BENCH_BUILD=${BENCH_BUILD:-$abs_top_builddir/tests/bench}
NOOP=$BENCH_BUILD/noop_probe

need_root
need_retop
need_cmd python3
need_fixture "$FIX"
BIN=$FIXTURES/$FIX
"$here/build-noop.sh" "$BENCH_BUILD" || fail "cannot build $NOOP (see above)"

pick_functions "$BIN" "$NFUNCS"
OFFSETS=$(cat "$T/offsets")
nprobes=$(echo "$OFFSETS" | wc -w)

start_fixture "$FIX"
echo "attach: $NFUNCS functions of $FIX (pid $FIXTURE_PID): $nprobes uprobes (entry + RET sites), $R rounds interleaved"
echo "  functions: $(head -n 3 "$T/names" | tr '\n' ' ')... $(tail -n 1 "$T/names")"

: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    # shellcheck disable=SC2086 # $TARGS and $OFFSETS are lists
    {
        printf 'retop %s ' "$i"
        python3 "$here/timecmd.py" -- "$RETOP" -b -p "$FIXTURE_PID" $TARGS -n 1 -d 0.05 -o json
        printf 'index %s ' "$i"
        python3 "$here/timecmd.py" -- "$RETOP" -l -x "$BIN" -o json zzzz-no-such-function
        printf 'floor %s ' "$i"
        python3 "$here/timecmd.py" --term -- "$NOOP" "$BIN" "$FIXTURE_PID" $OFFSETS
    } >>"$T/results"
    i=$((i + 1))
done
kill -0 "$FIXTURE_PID" 2>/dev/null || fail "$FIX died while being traced"

python3 - "$T/results" "$NFUNCS" <<'EOF'
import json, sys, statistics as st
n = int(sys.argv[2])
res = {"retop": [], "index": [], "floor": []}
broken = []
for line in open(sys.argv[1]):
    mode, rep, js = line.split(" ", 2)
    d = json.loads(js)
    res[mode].append(d)
    if mode == "retop":
        if d["rc"] != 0 or d["first_line_s"] is None:
            broken.append("round %s: retop exited %d: %s" % (rep, d["rc"], d["stderr"].strip()))
            continue
        snap = json.loads(d["stdout_tail"])
        tracing = sum(1 for f in snap["functions"] if f["state"] == "tracing")
        if len(snap["functions"]) != n or tracing != n:
            broken.append("round %s: %d functions in the snapshot, %d tracing (want %d): %s" % (
                rep, len(snap["functions"]), tracing, n,
                sorted(set(f["status"] for f in snap["functions"]))))
    elif mode == "index":
        if d["rc"] != 1:
            broken.append("round %s: retop -l with no match exited %d, expected 1" % (rep, d["rc"]))
    elif mode == "floor":
        if d["rc"] != 0 or d["first_line_s"] is None:
            broken.append("round %s: noop_probe exited %d: %s" % (rep, d["rc"], d["stderr"].strip()))
if broken:
    print("  BROKEN:")
    for b in broken:
        print("    " + b)
    sys.exit(1)

def med(mode, key):
    return st.median(d[key] for d in res[mode])

first = med("retop", "first_line_s")
index = med("index", "total_s")
rexit = med("retop", "exit_s")
fatt = med("floor", "first_line_s")
fdet = med("floor", "exit_s")
print("\n  round   retop first snapshot   retop exit after it   index only   floor attach   floor detach")
for i, (r, x, f) in enumerate(zip(res["retop"], res["index"], res["floor"]), 1):
    print("  %5d %20.3f s %19.3f s %10.3f s %12.3f s %12.3f s" % (
        i, r["first_line_s"], r["exit_s"], x["total_s"], f["first_line_s"], f["exit_s"]))
print("\n  medians:")
print("  retop, wall time to the first snapshot        %.3f s  (index + load + attach + 0.05 s interval)" % first)
print("    of which the index of the binary (retop -l)  %.3f s" % index)
print("    so load + attach + first interval, about     %.3f s" % (first - index))
print("  floor: noop_probe attaching the same probes    %.3f s" % fatt)
print("  ratio (first snapshot - index - 0.05 s) / floor attach  %.2f  (rough: retop's part also loads BPF and reads the process)"
      % ((first - index - 0.05) / fatt))
print("  retop exit after its snapshot (detach)         %.3f s" % rexit)
print("  floor: noop_probe detaching the same probes    %.3f s" % fdet)
print("  ratio retop exit / floor detach                %.2f" % (rexit / fdet))
EOF
