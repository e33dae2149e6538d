# shellcheck shell=sh
# Sourced by every benchmark:  here=$(cd "$(dirname "$0")" && pwd); . "$here/lib.sh"
# Paths default to the source tree holding the benchmark and its build/;
# then ../lib.sh (fail, skip, $T, fixtures...) and what several benchmarks
# share: the functions they trace and how they read a process's CPU time.

: "${abs_top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir/build}"
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$abs_top_srcdir/tests/lib.sh"
# Every benchmark runs retop at its defaults unless its own command line
# says otherwise, and why (run_traced below).

# pick_functions BIN N: the first N fully traceable functions of main,
# strconv, sort, strings and fmt in BIN (not the runtime's own), by package
# then name, then of every other package, the runtime's last, where N asks
# for more (a thousand for tui.sh NFUNCS=1000), without glob characters in their names.  Writes their names to
# $T/names (one a line) and the file offsets of their probes, entry and
# every RET site, to $T/offsets (one line); sets TARGS to "-t F1 ... -t FN".
pick_functions() {
    "$RETOP" -l -x "$1" -o json >"$T/list.json" 2>"$T/list.err" ||
        fail "retop -l -x $1 -o json failed: $(head -n 3 "$T/list.err")"
    python3 - "$T/list.json" "$2" "$T/names" "$T/offsets" <<'EOF' || fail "cannot pick functions"
import json, sys
fs = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
ok = [f for f in fs if f["traceable"] == "full" and not any(c in f["name"] for c in "*?[]\\ {}\t")]
pick = []
first = ("main", "strconv", "sort", "strings", "fmt")
for pkg in first:
    pick += sorted((f for f in ok if f["name"].split(".")[0] == pkg), key=lambda f: f["name"])
# Past those, every other package but the runtime's own, by name.
def own(name):
    pkg = name.split(".")[0]
    return pkg in first or pkg.startswith(("runtime", "internal/", "sync/atomic", "syscall"))
if len(pick) < n:
    pick += sorted((f for f in ok if not own(f["name"])), key=lambda f: f["name"])
# A small program has too few: then the runtime's own too (the interlock
# judged them; interlock-runtime.sh traces them all under load).
if len(pick) < n:
    taken = {f["name"] for f in pick}
    pick += sorted((f for f in ok if f["name"] not in taken), key=lambda f: f["name"])
if len(pick) < n:
    sys.exit("only %d functions to pick from, %d wanted" % (len(pick), n))
pick = pick[:n]
offs = []
for f in pick:
    offs.append(f["file_offset"] + f.get("entry_probe", 0))
    offs += [f["file_offset"] + r["offset"] for r in f["ret_sites"]]
open(sys.argv[3], "w").write("\n".join(f["name"] for f in pick) + "\n")
open(sys.argv[4], "w").write(" ".join(map(str, offs)) + "\n")
EOF
    # shellcheck disable=SC2034 # for the benchmark that sources this
    TARGS=$(sed 's/^/-t /' "$T/names" | tr '\n' ' ')
}

# interleaved R PERIOD MODE...: R rounds, each calling run_MODE ROUND for
# every mode, the list rotated by (ROUND - 1) % PERIOD: the machine drifts
# over a run, so no mode may always go first.
interleaved() {
    il_r=$1 il_p=$2
    shift 2
    il_i=1
    while [ "$il_i" -le "$il_r" ]; do
        for il_m in $(echo "$*" | awk -v k=$(((il_i - 1) % il_p)) '{ for (j = 0; j < NF; j++) printf "%s ", $((j + k) % NF + 1) }'); do
            "run_$il_m" "$il_i"
        done
        il_i=$((il_i + 1))
    done
}

# cpu_s PID: CPU seconds (utime + stime) of PID so far.
cpu_s() {
    python3 -c 'import os, sys
f = open("/proc/%s/stat" % sys.argv[1]).read().rsplit(")", 1)[1].split()
print((int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK"))' "$1"
}

# now: wall-clock seconds, for the length of a measured window.
now() { python3 -c 'import time; print("%.3f" % time.time())'; }

# settle SHOWN WARM DELAY: until WARM s and three refreshes of DELAY s past
# SHOWN (now when the live table showed): the budget settles in its first
# seconds, and the first fill of each of the three row buffers that take
# turns faults their pages in (tens of ms).
settle() {
    sleep "$(python3 -c 'import sys, time
print(max(0, float(sys.argv[1]) + float(sys.argv[2]) + 3 * float(sys.argv[3]) - time.time()))' "$1" "$2" "$3")"
}

# ---- runs of a fixture that waits for SIGUSR1 (the benchmarks set FIX,
# CALLS and RUN_TIMEOUT)

# wait_lines FILE N SECONDS: until FILE has at least N lines; 1 on timeout.
wait_lines() {
    n=$(($3 * 20))
    while [ "$( (cat "$1" 2>/dev/null || :) | wc -l)" -lt "$2" ]; do
        [ "$n" -gt 0 ] || return 1
        n=$((n - 1))
        sleep 0.05
    done
}

# stop_pid PID: SIGTERM it, reap it and forget it (so the cleanup never
# signals a reused PID); its exit status is in $stop_rc.
stop_pid() {
    kill "$1" 2>/dev/null
    if wait "$1"; then stop_rc=0; else stop_rc=$?; fi
    PIDS=$(echo " $PIDS " | sed "s/ $1 / /")
}

# result_fields RESULT.json: "calls elapsed_ns"
result_fields() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["calls"], d["elapsed_ns"])' "$1"
}

# work OUT: start the fixture's work and wait for its result in OUT.
work() {
    kill -USR1 "$FIXTURE_PID"
    wait_file "$1" "$RUN_TIMEOUT" || fail "$FIX made no result in $RUN_TIMEOUT s"
}

# run_none REP: the fixture with no probes; appends "none REP calls elapsed_ns"
# to $T/results.
run_none() {
    out=$T/none.$1.json
    # shellcheck disable=SC2086 # $FIX_FLAGS is a list
    start_fixture "$FIX" -calls "$CALLS" -out "$out" $FIX_FLAGS
    work "$out"
    stop_pid "$FIXTURE_PID"
    echo "none $1 $(result_fields "$out")" >>"$T/results"
}

# last_func SNAPS FUNC: "calls status sampled" of FUNC in the last snapshot
# of SNAPS (status with _ for spaces), or "missing none 0".
last_func() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
last = None
for line in open(sys.argv[1]):
    last = json.loads(line)
for f in last["functions"]:
    if f["name"] == sys.argv[2]:
        print(f["calls"], f["status"].replace(" ", "_"), f["sampled"])
        break
else:
    print("missing none 0")
EOF
}

# run_traced MODE REP: the fixture traced by retop -b (with $RETOP_FLAGS and
# --budget 0: what these benchmarks compare is the cost of timing every
# call, which a budget would shed);
# appends "MODE REP calls elapsed_ns retop_calls retop_status" to
# $T/results, the counts from retop's last snapshot.
run_traced() {
    mode=$1
    shift
    out=$T/$mode.$1.json
    snaps=$T/$mode.$1.snap
    # shellcheck disable=SC2086 # $FIX_FLAGS is a list
    start_fixture "$FIX" -calls "$CALLS" -out "$out" $FIX_FLAGS
    # shellcheck disable=SC2086 # $RETOP_FLAGS is a list
    "$RETOP" -b -p "$FIXTURE_PID" -t "$FUNC" -d 1 -o json --budget 0 $RETOP_FLAGS >"$snaps" 2>"$T/retop.err" &
    rt=$!
    track_pid "$rt"
    wait_lines "$snaps" 1 30 ||
        fail "retop -b -p $FIXTURE_PID -t $FUNC printed no snapshot in 30 s: $(head -n 3 "$T/retop.err")"
    work "$out"
    # The fixture stays alive: wait for two more snapshots, so the last one
    # was certainly taken after the last call returned.
    have=$(wc -l <"$snaps")
    wait_lines "$snaps" $((have + 2)) 10 ||
        fail "retop stopped printing snapshots: $(head -n 3 "$T/retop.err")"
    stop_pid "$rt"
    [ "$stop_rc" -eq 0 ] || fail "retop exited $stop_rc on SIGTERM: $(head -n 3 "$T/retop.err")"
    stop_pid "$FIXTURE_PID"
    got=$(last_func "$snaps" "$FUNC" | cut -d' ' -f1,2) || fail "cannot parse retop's snapshots in $snaps"
    echo "$mode $1 $(result_fields "$out") $got" >>"$T/results"
}

# ---- no-op uprobes: the floor a tracer cannot go below

# func_offsets BIN FUNC [first]: the file offsets of FUNC's probes as retop
# places them (its entry probe, then every RET site), one line; with
# "first", the entry probe on the function's first instruction instead.
func_offsets() {
    "$RETOP" -l -x "$1" -o json "$2" >"$T/list.json" 2>"$T/list.err" ||
        fail "retop -l -x $1 -o json $2 failed: $(head -n 3 "$T/list.err")"
    python3 - "$T/list.json" "$2" "${3:-}" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    f = json.loads(line)
    if f["name"] == sys.argv[2]:
        if f["traceable"] != "full":
            sys.exit("%s is not fully traceable: %s" % (f["name"], f["reason"]))
        entry = f["file_offset"] + (0 if sys.argv[3] == "first" else f["entry_probe"])
        offs = [entry] + [f["file_offset"] + r["offset"] for r in f["ret_sites"]]
        print(" ".join(str(o) for o in offs))
        break
else:
    sys.exit("%s not in the listing" % sys.argv[2])
EOF
}

# need_noop: build the no-op loader into $BENCH_BUILD; sets NOOP.
need_noop() {
    need_cmd clang
    need_cmd bpftool
    BENCH_BUILD=${BENCH_BUILD:-$abs_top_builddir/tests/bench}
    NOOP=$BENCH_BUILD/noop_probe
    "$abs_top_srcdir/tests/bench/build-noop.sh" "$BENCH_BUILD" || fail "cannot build $NOOP (see above)"
}

# run_floor MODE REP OFFSETS...: the fixture with no-op uprobes at OFFSETS
# of $FIXTURES/$FIX; appends "MODE REP calls elapsed_ns" to $T/results.
run_floor() {
    mode=$1 rep=$2
    shift 2
    out=$T/$mode.$rep.json
    # shellcheck disable=SC2086 # $FIX_FLAGS is a list
    start_fixture "$FIX" -calls "$CALLS" -out "$out" $FIX_FLAGS
    # A file per round: a "ready" left by the previous round must not count.
    "$NOOP" "$FIXTURES/$FIX" "$FIXTURE_PID" "$@" >"$T/noop.$mode.$rep.out" 2>"$T/noop.err" &
    noop=$!
    track_pid "$noop"
    wait_lines "$T/noop.$mode.$rep.out" 1 30 ||
        fail "noop_probe did not attach: $(head -n 3 "$T/noop.err")"
    work "$out"
    stop_pid "$noop"
    [ "$stop_rc" -eq 0 ] || fail "noop_probe exited $stop_rc: $(head -n 3 "$T/noop.err")"
    stop_pid "$FIXTURE_PID"
    echo "$mode $rep $(result_fields "$out")" >>"$T/results"
}
