#!/bin/sh
# --time-split sched: with its probes on Go's scheduler (runtime.execute,
# runtime.schedule), a call Go parked is split exactly and its parks are
# summed by Go's wait reason.  On the timesplit fixture (see
# trace-timesplit.sh), traced with --time-split sched and otherwise at the
# defaults (the scheduler's probes count in the budget): time.Sleep(5ms) is
# at least 85% parked by Go and at least 90% of its parked calls are split
# exactly, with its own CPU time (above 0) apart, and "sleep" is at least
# 90% of its parked time; the other three functions are split as they are
# without the probes; the probes stayed in, and their traps a second are
# stated.  The text face lists the reasons under the row.
# Go 1.19 (the system's) and 1.27 (scripts/go-toolchain): two releases'
# wait reasons and layouts.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture timesplit-default
alone_among timesplit

funcs="main.Busy main.Syscall main.Sleep main.Contended"

# check LABEL: the last snapshot of $SNAP against what each function does.
check() {
    python3 - "$SNAP" "$OUT" "$1" <<'EOF' || fail "$1: the scheduler's split is not what the functions do"
import json, sys
snap_path, out_path, label = sys.argv[1:4]
snaps = [json.loads(l) for l in open(snap_path) if l.strip()]
snap = snaps[-1]
own = json.load(open(out_path))["own"]
parts = ("on_cpu", "runqueue", "kernel_blocked", "go_parked")
want = {"main.Busy": ("on_cpu", 0.85), "main.Syscall": ("kernel_blocked", 0.85),
        "main.Sleep": ("go_parked", 0.85), "main.Contended": ("runqueue", 0.25)}
bad = []
ts = snap["time_split"]
hits = max(s["time_split"]["sched_hits_per_s"] for s in snaps)
print("%s mode %s, scheduler probed %s, up to %.0f traps/s" % (label, ts["mode"], ts["sched_watched"], hits))
if ts["mode"] != "sched" or not ts["sched_watched"] or hits <= 0:
    bad.append("time_split %s, %.0f traps/s at most" % (ts, hits))
for f in snap["functions"]:
    n, t = f["name"], f["time_split"]
    if f["status"] != "tracing" or f["calls"] != 100 or not t:
        bad.append("%s: %s, %d calls, split %s" % (n, f["status"], f["calls"], t))
        continue
    ns = {p: t[p + "_ns"] for p in parts}
    total = sum(ns.values())
    share = {p: ns[p] / total for p in parts}
    why = ", ".join("%s %.1f%%" % (r["reason"], 100 * r["share"]) for r in t["wait_reasons"])
    print("%s %-15s %s; %d split, %d parked (%d split exactly), %d unsplit; parked: %s" % (
        label, n, ", ".join("%s %.1f%%" % (p, 100 * share[p]) for p in parts),
        t["calls_split"], t["calls_parked"], t["calls_parked_split"], t["calls_unsplit"], why or "-"))
    part, least = want[n]
    o = own[n]
    if part != "runqueue" and o["calls"] and o["wall_ns"]:
        least -= o["runq_ns"] / o["wall_ns"]
    if share[part] < least:
        bad.append("%s: %s %.1f%%, expected at least %.1f%%" % (n, part, 100 * share[part], 100 * least))
    if t["covered_share"] < 0.95:
        bad.append("%s: the split covers %.1f%% of the calls" % (n, 100 * t["covered_share"]))
    if n != "main.Sleep":
        continue
    if t["calls_parked_split"] < 0.9 * t["calls_parked"] or ns["on_cpu"] <= 0:
        bad.append("%s: %d of %d parked calls split exactly, on CPU %d ns"
                   % (n, t["calls_parked_split"], t["calls_parked"], ns["on_cpu"]))
    r = t["wait_reasons"]
    if not r or r[0]["reason"] != "sleep" or r[0]["share"] < 0.9:
        bad.append("%s: parked for %s, expected sleep" % (n, why or "no reason"))
for b in bad:
    print("%s: %s" % (label, b), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

# trace LABEL FIXTURE: the fixture traced with --time-split sched, checked.
trace() {
    # shellcheck disable=SC2086 # $funcs is a list
    set -- "$1" "$2" $(for f in $funcs; do printf ' -t %s' "$f"; done)
    label=$1 fixture=$2
    shift 2
    trace_fixture "$fixture" -prio -calls 100 -- "$@" --time-split sched -d 0.5
    check "$label"
}

trace go1.19 timesplit-default

# The text face: the reasons on a line under main.Sleep's row, and the
# scheduler's probes and their cost in the header.
start_fixture timesplit-default -calls 20
"$RETOP" -b -p "$FIXTURE_PID" -t main.Sleep --time-split sched -d 1 -n 3 >"$T/text" \
    2>"$T/text.err" &
rp=$!
track_pid "$rp"
text_started "$T/text" "$rp"
kill -USR1 "$FIXTURE_PID"
wait "$rp" || fail "retop -b (text) failed: $(head -n 3 "$T/text.err")"
grep -q '^    parked: sleep [0-9.]*%' "$T/text" ||
    fail "no reasons under main.Sleep's row: $(grep -A 3 '^main.Sleep' "$T/text" | head -n 4)"
grep -q "^time split: Go's scheduler probed, [0-9]* traps/s, " "$T/text" ||
    fail "no line about the scheduler's probes: $(head -n 6 "$T/text")"

rel=1.27
goroot=$("$abs_top_srcdir/scripts/go-toolchain" "$rel") ||
    skip "Go $rel not available from Debian's mirror (scripts/go-toolchain $rel)"
mkdir -p "$T/go$rel"
(cd "$abs_top_srcdir/tests/go/timesplit" && GOCACHE="$abs_top_builddir/tests/go/bin/.gocache" \
    GOPATH="$abs_top_builddir/tests/go/bin/.gopath" GOENV=off GOTOOLCHAIN=local GOPROXY=off \
    GOFLAGS=-mod=mod CGO_ENABLED=0 "$goroot/bin/go" build -o "$T/go$rel/timesplit-go$rel" .) \
    >"$T/build.err" 2>&1 || fail "go $rel build failed: $(head -n 5 "$T/build.err")"
FIXTURES=$T/go$rel
trace "go$rel" "timesplit-go$rel"
