#!/bin/sh
# lefthook from the npm registry (not built here: Go 1.27.0, stripped), a
# short program traced from its first instruction (tests/realbin/held.py):
# `lefthook run` of a hook of N commands, each `sleep 0.05`, in a fresh git
# repository.  lefthook runs each command through one call each of
# controller.(*Controller).runJob, runSingleJob and exec.CommandExecutor.execute,
# and the hook through one controller.(*Controller).RunHook: retop counts
# exactly N, N, N and 1; each execute lasts at least the 50 ms its command
# sleeps; the calls nest inside one another and inside lefthook's run time;
# lefthook exits 0 and has run every command.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../realbin/lib.sh
. "$abs_top_srcdir/tests/realbin/lib.sh"
need_root
need_cmd python3
need_cmd git
need_retop

N=8
C=github.com/evilmartians/lefthook/v2/internal/run/controller
hook="$C.(*Controller).RunHook" job="$C.(*Controller).runJob"
single="$C.(*Controller).runSingleJob" exe="$C/exec.CommandExecutor.execute"
glob() { printf '%s\n' "$1" | sed 's/\*/[*]/g'; }
realbin_fetch lefthook-2.2.2

# A hook of its own name: lefthook filters pre-commit's commands by staged
# files, not those of a hook it does not know.
repo=$T/repo
mkdir -p "$repo"
git -C "$repo" init -q . || fail "git init $repo failed"
{
    echo "retop-check:"
    echo "  commands:"
    i=1
    while [ "$i" -le "$N" ]; do
        printf '    c%d:\n      run: sleep 0.05 && echo retop-job-%d\n' "$i" "$i"
        i=$((i + 1))
    done
} >"$repo/lefthook.yml"

# HOME in $T: lefthook and git write nothing of the user's.
(cd "$repo" && HOME=$T exec python3 "$REALBIN/held.py" "$T/pid" "$T/go" "$T/status" \
    "$BIN" run retop-check >"$T/run.out" 2>"$T/run.err") &
hp=$!
track_pid "$hp"
wait_file "$T/pid" 10 || fail "lefthook did not start under held.py: $(head -n 3 "$T/run.err")"
lp=$(cat "$T/pid")
track_pid "$lp"

"$RETOP" -b -p "$lp" -t "$(glob "$hook")" -t "$(glob "$job")" -t "$(glob "$single")" \
    -t "$exe" -d 0.2 -o json >"$T/snap" 2>"$T/err" &
rp=$!
track_pid "$rp"
sc wait "$T/snap" 1 20 "$rp" || fail "retop did not attach to lefthook: $(head -n 3 "$T/err")"
sc status "$T/snap" tracing "$hook" "$job" "$single" "$exe" || fail "lefthook: not every function is traced"
touch "$T/go"
wait_file "$T/status" 30 || fail "lefthook did not end within 30 s of its release: $(head -n 3 "$T/run.err")"
wait "$hp" || fail "held.py failed: $(tail -n 3 "$T/run.err")"
read -r code wall <"$T/status"
[ "$code" -eq 0 ] || fail "lefthook run exited $code under tracing: $(tail -n 5 "$T/run.out")"
sc gone "$rp" 5 || fail "retop -b -p still runs 5 s after lefthook exited"
if wait "$rp"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "retop exited $rc after lefthook exited: $(head -n 3 "$T/err")"

# lefthook's own account: every command ran once.
ran=$(grep -c '^retop-job-[0-9]*$' "$T/run.out" || true)
[ "$ran" -eq "$N" ] || fail "lefthook ran $ran of $N commands: $(tail -n 5 "$T/run.out")"

python3 - "$T/snap" "$N" "$wall" "$hook" "$job" "$single" "$exe" <<'PY' ||
import json, sys
snap = json.loads(open(sys.argv[1]).read().strip().split("\n")[-1])
n, wall = int(sys.argv[2]), int(sys.argv[3])
f = {x["name"]: x for x in snap["functions"]}
hook, job, single, exe = (f[k] for k in sys.argv[4:8])
bad = []
for x, want in ((hook, 1), (job, n), (single, n), (exe, n)):
    if x["status"] != "detached: process exited":
        bad.append("%s: status %r, expected 'detached: process exited'" % (x["name"], x["status"]))
    for k, v in (("calls", want), ("in_flight", 0), ("orphans", 0), ("unmatched_returns", 0)):
        if x[k] != v:
            bad.append("%s: %s is %s, expected %s" % (x["name"], k, x[k], v))
# Each command sleeps 50 ms, and execute waits for it.
if not exe["mean_ns"] >= 50000000:
    bad.append("execute's mean %d ns is shorter than the 50 ms its command sleeps" % exe["mean_ns"])
# Nested calls nest.  retop takes each traced callee's traps out of its
# caller's duration, all of them, while a callee keeps what its own two
# probes leave in (the end of its entry hit, the start of its RET hit): a
# callee's max may pass its caller's by at most two hits' cost.
tol = 2 * max(snap["probe_hit_cost_ns"].values())
chain = [exe["max_ns"], single["max_ns"], job["max_ns"], hook["max_ns"]]
if any(a > b + tol for a, b in zip(chain, chain[1:])) or hook["max_ns"] > wall:
    bad.append("max execute %d <= runSingleJob %d <= runJob %d <= RunHook %d (each within %d ns) <= lefthook's run %d ns: not so" % (
        exe["max_ns"], single["max_ns"], job["max_ns"], hook["max_ns"], tol, wall))
for b in bad:
    print("realbin-lefthook: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
    fail "lefthook run of $N commands: retop's last snapshot is wrong (above)"
echo "lefthook 2.2.2 (Go 1.27.0) run, $N commands: RunHook $(sc get "$T/snap" "$hook" calls), \
runJob $(sc get "$T/snap" "$job" calls), runSingleJob $(sc get "$T/snap" "$single" calls), \
execute $(sc get "$T/snap" "$exe" calls) (mean $(sc get "$T/snap" "$exe" mean_ns) ns) \
in lefthook's $((wall / 1000)) us; exit 0"
