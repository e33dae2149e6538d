#!/bin/sh
# Functions whose calls cannot be paired: runtime.memequal leaves through a
# tail jump to memeqbody as well as by its RET (entry-only: counted at its
# entry, which counts calls: it has no stack-check prologue), and
# runtime.mcall and its target runtime.park_m run on g0 and never return
# (refused).  retop -l -o json says so with the reason; tracing them gives
# one line on stderr and each its status with the reason, while
# main.MayPanic traces.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture panics-default
bin=$FIXTURES/panics-default

"$RETOP" -l -x "$bin" -o json >"$T/list" 2>"$T/err" || fail "retop -l failed: $(head -n 3 "$T/err")"
python3 - "$T/list" <<'PY' || fail "retop -l -x panics-default -o json: see above"
import json, sys
fs = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    fs[d["name"]] = d
want = {
    "runtime.memequal": ("entry-only", "tail jump too (+0x16 to memeqbody)", True),
    "runtime.mcall": ("no", "g0", False),
    "runtime.park_m": ("no", "runs on g0 through mcall and never returns", False),
    "main.MayPanic": ("full", "", None),
}
bad = []
for name, (tr, why, at_entry) in want.items():
    d = fs.get(name)
    if d is None:
        bad.append("%s is not listed" % name)
        continue
    if d["traceable"] != tr or why not in d["reason"] or (why == "" and d["reason"]):
        bad.append("%s: traceable %r, reason %r; expected %r with %r" % (name, d["traceable"], d["reason"], tr, why))
    if at_entry is not None and d["counts_at_entry"] != at_entry:
        bad.append("%s: counts_at_entry %r, expected %r" % (name, d["counts_at_entry"], at_entry))
for b in bad:
    print("index-g0-tail: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# Tracing: one line for each refused function, the others attached.
start_fixture panics-default -calls 100 -workers 4
retop_batch "$T/snap" -p "$FIXTURE_PID" -t runtime.park_m -t runtime.mcall -t runtime.memequal \
    -t main.MayPanic -d 0.2
retop_snapshots 1
retop_stop
# One line for the two refused (the snapshot carries each one's reason).
[ "$(wc -l <"$T/snap.err")" -eq 1 ] && grep -q "2 of 4 functions refused by the interlock" "$T/snap.err" ||
    fail "expected one line on stderr saying 2 of 4 functions were refused: $(cat "$T/snap.err")"
sc status "$T/snap" "error: runtime.park_m: not traceable: runs on g0 through mcall" runtime.park_m ||
    fail "park_m's status"
sc status "$T/snap" "error: runtime.mcall: not traceable: switches to the g0 stack" runtime.mcall ||
    fail "mcall's status"
sc status "$T/snap" entry-only runtime.memequal || fail "memequal is not entry-only"
sc status "$T/snap" tracing main.MayPanic || fail "main.MayPanic is not tracing"
echo "g0/tail: memequal entry-only (tail jump), mcall and park_m refused (one line, each its reason), MayPanic tracing"
