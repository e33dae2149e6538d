#!/bin/sh
# Where the time goes: the timesplit fixture has four functions whose time
# goes each to one place, traced at retop's defaults (the split is on, with
# no probe of its own).  Each is split as what it does: ~5 ms of arithmetic
# at least 85% on CPU; a 5 ms nanosleep system call at least 85% blocked in
# the kernel; time.Sleep(5ms) at least 85% parked by Go; 10 ms of arithmetic
# while twice as many processes as CPUs spin, a quarter or more waiting for
# a CPU.  The split covers at least 95% of the calls, its parts add up to
# their durations, and the CPU time a call is within 10% of the thread's
# own CPU clock around each call, less retop's traps of the call.  The
# fixture runs first among the machine's other work (-prio),
# and what its thread still waited for a CPU meanwhile, as it measured it,
# is allowed out of the 85%: the test is of the split, not of a shared
# machine's load.  The text face states the split under each row;
# --time-split off leaves it out.
# Go 1.19 (the system's) and 1.27 (scripts/go-toolchain).
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
    python3 - "$SNAP" "$OUT" "$1" <<'EOF' || fail "$1: the time split is not what the functions do"
import json, sys
snap_path, out_path, label = sys.argv[1:4]
snap = [json.loads(l) for l in open(snap_path) if l.strip()][-1]
own = json.load(open(out_path))["own"]
parts = ("on_cpu", "runqueue", "kernel_blocked", "go_parked")
want = {"main.Busy": ("on_cpu", 0.85), "main.Syscall": ("kernel_blocked", 0.85),
        "main.Sleep": ("go_parked", 0.85), "main.Contended": ("runqueue", 0.25)}
bad = []
if not snap["time_split"]["on"]:
    bad.append("the split is off: %s" % snap["time_split"]["why_off"])
for f in snap["functions"]:
    n, t = f["name"], f["time_split"]
    if f["status"] != "tracing" or f["calls"] != 100 or not t:
        bad.append("%s: %s, %d calls, split %s" % (n, f["status"], f["calls"], t))
        continue
    ns = {p: t[p + "_ns"] for p in parts}
    total = sum(ns.values())
    share = {p: ns[p] / total for p in parts}
    print("%s %-15s %s, %d split, %d parked, %d unsplit" % (
        label, n, ", ".join("%s %.1f%%" % (p, 100 * share[p]) for p in parts),
        t["calls_split"], t["calls_parked"], t["calls_unsplit"]))
    part, least = want[n]
    # The machine's other work may keep its thread waiting for a CPU too:
    # that much, as the thread measured it, is allowed out of the 85%.
    o = own[n]
    if part != "runqueue" and o["calls"] and o["wall_ns"]:
        least -= o["runq_ns"] / o["wall_ns"]
    if share[part] < least:
        bad.append("%s: %s %.1f%%, expected at least %.1f%%" % (n, part, 100 * share[part], 100 * least))
    if t["covered_share"] < 0.95:
        bad.append("%s: the split covers %.1f%% of the calls" % (n, 100 * t["covered_share"]))
    # The parts are the durations of the calls split: calls x mean, less
    # the unsplit calls' (at about the mean).
    whole = f["mean_ns"] * f["calls"] * t["covered_share"]
    if abs(total - whole) > 0.02 * whole + f["calls"]:
        bad.append("%s: parts add up to %d ns, the calls split to %d ns" % (n, total, whole))
    if n == "main.Sleep" or o["calls"] < 90:
        continue
    # On CPU a call, against its thread's own CPU clock around it, which
    # also holds retop's own traps of the call (what retop says its two
    # hits add to a call, taken out of its figure) and 20 us for its reads.
    # Its own run-queue wait also counts the waits around its reads of
    # schedstat, which a loaded machine makes long: printed, not compared.
    got, mine = ns["on_cpu"] / t["calls_split"], o["cpu_ns"] / o["calls"]
    traps = f["probe_cost"]["ns_per_call"]
    print("%s %-15s on CPU %.0f us a call, its thread's own %.0f us less retop's traps, %.0f us; "
          "waiting for a CPU %.0f us, its own %.0f us"
          % (label, n, got / 1e3, mine / 1e3, traps / 1e3, ns["runqueue"] / t["calls_split"] / 1e3,
             o["runq_ns"] / o["calls"] / 1e3))
    if abs(got + traps - mine) > 0.10 * mine + 20000:
        bad.append("%s: on CPU %.0f us a call, its thread's own figure %.0f us less retop's traps, %.0f us"
                   % (n, got / 1e3, mine / 1e3, traps / 1e3))
for b in bad:
    print("%s: %s" % (label, b), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

# trace LABEL FIXTURE: the fixture traced at the defaults, checked.
trace() {
    # shellcheck disable=SC2086 # $funcs is a list
    set -- "$1" "$2" $(for f in $funcs; do printf ' -t %s' "$f"; done)
    label=$1 fixture=$2
    shift 2
    trace_fixture "$fixture" -prio -calls 100 -- "$@" -d 0.5
    check "$label"
}

trace go1.19 timesplit-default

# The text face: the split on a line under main.Sleep's row, once the
# fixture did its work (on a loaded machine that outlasts a fixed number of
# snapshots); and nothing of it with --time-split off (JSON's time_split
# null, the header says so).
rm -f "$T/text.out"
start_fixture timesplit-default -calls 20 -out "$T/text.out"
"$RETOP" -b -p "$FIXTURE_PID" -t main.Sleep -d 1 >"$T/text" 2>"$T/text.err" &
rp=$!
track_pid "$rp"
text_started "$T/text" "$rp"
fixture_go "$T/text.out"
text_stop "$T/text" "$rp"
grep -q '^    time: on CPU [0-9.]*%, run queue [0-9.]*%, kernel [0-9.]*%, parked 100.0% ([0-9]* parked)$' "$T/text" ||
    fail "no split line under main.Sleep's row: $(grep -A 3 '^main.Sleep' "$T/text" | head -n 4)"
trace_fixture timesplit-default -calls 5 -- -t main.Busy --time-split off -d 0.5
python3 - "$SNAP" <<'EOF' || fail "--time-split off: a split is still there"
import json, sys
snap = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
ts = snap["time_split"]
if ts["on"] or "--time-split off" not in ts["why_off"] or snap["functions"][0]["time_split"] is not None:
    sys.exit("time_split %s, the function's %s" % (ts, snap["functions"][0]["time_split"]))
EOF

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
