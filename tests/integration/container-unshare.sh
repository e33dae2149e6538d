#!/bin/sh
# A Go process in a container, made with unshare(1) as a runtime makes one
# (no runtime needed): its own PID and mount namespaces, its root an overlay
# on a tmpfs that only its mount namespace has, the payments fixture at
# /app/payments, a path the host does not have. The picker lists it under its
# host PID, marked "[container 1]" (PID 1 in its namespace), and opening it
# names its binary /proc/PID/root/app/payments; -p PID and, in a second
# container, -x /proc/PID/root/app/payments (which finds the process running
# it) count exactly the fixture's own calls and RET paths; the fixture ends
# with status 0 and its own correct result.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../tui/tmux.sh
. "$(dirname "$0")/../tui/tmux.sh"
need_root
need_cmd unshare
need_cmd chroot
need_cmd python3
need_retop
need_fixture payments-default

funcs="main.ProcessPayment main.ValidateCard main.CalculateTotal"
[ ! -e /app/payments ] || skip "/app/payments exists here: the container's binary must be a path the host does not have"

# The container's start, run by unshare as PID 1 of the new namespaces
# ($1 its mount point, $2 the host directory seen as /io, $3 the image's
# binary): a tmpfs, an overlay on it over the image, /io and its own /proc,
# then the overlay moved over / and entered as switch_root does (of the
# host's files only /io stays reachable), and the fixture started there.
# shellcheck disable=SC2016 # expanded by the container's shell
ctr_init='set -e
r=$1
mount -t tmpfs -o mode=755 retop-ctr "$r"
mkdir -p "$r/image/app" "$r/upper" "$r/work" "$r/root"
cp "$3" "$r/image/app/payments"
mount -t overlay retop-ctr -o "lowerdir=$r/image,upperdir=$r/upper,workdir=$r/work" "$r/root"
mkdir "$r/root/io" "$r/root/proc"
mount --bind "$2" "$r/root/io"
mount -t proc proc "$r/root/proc"
cd "$r/root"
mount --move . /
exec chroot . /app/payments -ready /io/ready -calls 40 -workers 4 -out /io/out'

# start_container N: payments in container N, waiting for SIGUSR1; its host
# PID in $CPID, unshare's in $UP; its /io is $T/ioN here. The mounts live in
# the container's mount namespace only: they go with its last process.
start_container() {
    mkdir "$T/io$1" "$T/mnt$1"
    unshare --pid --mount --propagation private --fork --kill-child \
        sh -c "$ctr_init" sh "$T/mnt$1" "$T/io$1" "$FIXTURES/payments-default" \
        >"$T/ctr$1.log" 2>&1 &
    UP=$!
    track_pid "$UP"
    wait_file "$T/io$1/ready" 10 ||
        fail "container $1 did not start in 10 s: $(head -n 3 "$T/ctr$1.log")"
    CPID=$(cat "/proc/$UP/task/$UP/children")
    CPID=${CPID% }
    track_pid "$CPID"
    # What makes it a container, as the kernel says.
    [ "$(sed -n 's/^NSpid:[[:space:]]*//p' "/proc/$CPID/status" | tr -s '\t ' ' ')" = "$CPID 1" ] ||
        fail "container $1: PID $CPID is not PID 1 of its own namespace: $(grep NSpid "/proc/$CPID/status")"
    [ "$(readlink "/proc/$CPID/exe")" = /app/payments ] ||
        fail "container $1: PID $CPID runs $(readlink "/proc/$CPID/exe"), not /app/payments"
    [ -x "/proc/$CPID/root/app/payments" ] ||
        fail "container $1: /proc/$CPID/root/app/payments does not reach its binary"
    [ -z "$(ls -A "$T/mnt$1")" ] || fail "container $1: its mounts show here in $T/mnt$1"
}

# finish_container N: after the run, SIGTERM ends the fixture (its own
# protocol) and the container with it: status 0, and its result is right.
finish_container() {
    kill -0 "$CPID" || fail "container $1: the fixture died while traced"
    kill "$CPID"
    if wait "$UP"; then rc=0; else rc=$?; fi
    [ "$rc" -eq 0 ] || fail "container $1: the fixture exited $rc: $(head -n 3 "$T/ctr$1.log")"
    python3 - "$T/io$1/out" <<'PY' || fail "container $1: the fixture's own result is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
pf = {k: v["calls"] for k, v in r["per_func"].items()}
want = {"main.ProcessPayment": 40, "main.ValidateCard": 40, "main.CalculateTotal": 30}
if r["calls"] != 40 or r["paths"] != {"valid": 30, "invalid": 10} or pf != want:
    print("fixture result %s, expected 40 calls, 30 valid, 10 invalid" % r, file=sys.stderr)
    sys.exit(1)
PY
}

# trace N ARGS...: retop -b ARGS on container N's run: attached, then the
# fixture's 40 calls, one more snapshot, SIGINT; snapshots in $T/snapN.
trace() {
    ctr=$1
    shift
    snap=$T/snap$ctr
    retop_batch "$snap" "$@" -t main.ProcessPayment -t main.ValidateCard -t main.CalculateTotal -d 0.2
    sc wait-targets "$snap" 10 "$RETOP_PID" "$CPID" ||
        fail "retop -b $*: PID $CPID is not its target: $(retop_err)"
    retop_snapshots 1
    fixture_go "$T/io$ctr/out" "$CPID"
    retop_snapshots 1
    retop_stop
    # shellcheck disable=SC2086 # $funcs is a list
    {
        sc targets "$snap" "$CPID" && sc exact "$snap" "$T/io$ctr/out" $funcs &&
            sc paths "$snap" "$T/io$ctr/out" main.ValidateCard
    } || fail "retop -b $* on payments -calls 40 -workers 4 in a container: wrong targets or counts"
}

# 1. The picker lists it, marked; opening it names its binary by the path
# that reaches it from here. Its PID as the filter, so that its row is on
# screen however many Go processes run here (one whose PID contains ours
# has a larger one, and sorts after it).
start_container 1
tui_start 160 30
expect_screen '^Go processes: [0-9]+ \(rescanned' 15 "picker's first scan"
keys /
type_text "$CPID"
expect_screen "^ *$CPID +[a-z].* \[container 1\] /app/payments -ready /io/ready " 10 \
    "picker lists PID $CPID as a container's PID 1"
keys Enter
expect_screen '^Functions: [0-9]+' 20 "function browser of PID $CPID"
expect_screen "^retop - .*, pid $CPID /proc/$CPID/root/app/payments" 5 "header names the binary"
quit_ok 20 "in the browser of PID $CPID"

# 2. -p PID: its host PID.
trace 1 -p "$CPID"
exe=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["targets"][0]["exe"])' "$T/snap1")
[ "$exe" = "/proc/$CPID/root/app/payments" ] ||
    fail "retop -p $CPID names the binary '$exe', not /proc/$CPID/root/app/payments"
calls_p=$(sc get "$T/snap1" main.ProcessPayment calls)
finish_container 1
pid1=$CPID

# 3. -x through its root: a second container, as its binary is that
# container's alone.
start_container 2
trace 2 -x "/proc/$CPID/root/app/payments"
calls_x=$(sc get "$T/snap2" main.ProcessPayment calls)
finish_container 2

echo "payments-default in a container (PID 1 there): picker [container 1] for PID $pid1;" \
    "-p $pid1: ProcessPayment $calls_p of 40; -x /proc/$CPID/root/app/payments: $calls_x of 40; fixtures exited 0"
