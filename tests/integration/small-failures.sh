#!/bin/sh
# Small failures, each once: a FIFO given as the executable is refused in
# one line instead of hanging in open(); retop's CPU% is measured over a
# full interval (the first snapshot showed 378%); the target exiting while
# its functions attach gives one line; `make retop` in a fresh build
# directory generates the BPF skeleton before compiling the tracer.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd taskset
need_cmd python3
need_retop
need_fixture stress-default

# A FIFO: refused at once (timeout's 124 would mean a hang).
mkfifo "$T/fifo"
for args in "-l -x $T/fifo" "-b -x $T/fifo -t main.Work"; do
    # shellcheck disable=SC2086 # $args is a list
    if timeout 10 "$RETOP" $args >"$T/out" 2>"$T/err"; then rc=0; else rc=$?; fi
    [ "$rc" -eq 1 ] || [ "$rc" -eq 2 ] || fail "retop $args: exit $rc, expected 1 or 2"
    [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q 'not a regular file' "$T/err" ||
        fail "retop $args: expected one line saying 'not a regular file', got: $(head -n 3 "$T/err")"
done

# CPU%: the first snapshot's figure covers its own interval only, not the
# index and the attach of 250 functions before it.  retop's sampling is one
# thread: over a full interval it cannot pass 100%.  (The index and
# the attach take about 0.1 s of CPU: over a 0.05 s interval, over 200%.)
start_fixture stress-default -mode steady -loop -workers 2
fixture=$FIXTURE_PID
kill -USR1 "$fixture"
# About 245 functions: under --max-functions' ceiling of 255 with room for
# the fixture to grow.
many="-t reflect.* -t fmt.* -t time.* -t strconv.[A-Za-p]* --max-functions 255"
set -f # the patterns in $many are for retop, not for the shell
# shellcheck disable=SC2086 # $many is a list
expect_exit 0 "$RETOP" -b -p "$fixture" $many -n 2 -d 0.05
cpu=$(sed -n 's/.*cpu \([0-9.]*\)%.*/\1/p' "$T/out" | head -n 1)
[ -n "$cpu" ] || fail "no cpu figure in: $(head -n 1 "$T/out")"
awk -v c="$cpu" 'BEGIN { exit !(c <= 100) }' || fail "first snapshot: cpu $cpu%, over one thread's 100%"

# The target exits (SIGKILL) after 20 of about 250 functions are attached.
# A fast machine attaches them all within one poll below: retop runs niced
# on one CPU beside a busy loop, so that it is still attaching when the
# target dies (nice 10, a tenth of the CPU: at 19 the BPF programs' load
# and verification alone took over 30 s).
taskset -c 0 sh -c 'while :; do :; done' &
hog=$!
track_pid "$hog"
# shellcheck disable=SC2086 # $many is a list
taskset -c 0 nice -n 10 "$RETOP" -v -b -p "$fixture" $many -d 0.2 >"$T/out" 2>"$T/err" &
rp=$!
track_pid "$rp"
n=0
while [ "$(grep -c 'probes at' "$T/err")" -lt 20 ]; do
    n=$((n + 1))
    [ "$n" -lt 600 ] || fail "retop did not attach 20 functions in 60 s: $(head -n 3 "$T/err")"
    sleep 0.1
done
kill -9 "$fixture"
if wait "$rp"; then rc=0; else rc=$?; fi
kill "$hog"
[ "$(grep -c 'probes at' "$T/err")" -lt 240 ] ||
    fail "retop attached $(grep -c 'probes at' "$T/err") functions before the target died: not the case under test"
[ "$rc" -eq 1 ] || fail "target killed while attaching: retop exited $rc, expected 1: $(grep -v ': info: ' "$T/err" | head -n 3)"
# (An SDK answering on the default port may add its own line: not ours.)
grep -v -e ': info: ' -e '^retop: sdk: ' "$T/err" >"$T/lines"
[ "$(wc -l <"$T/lines")" -eq 1 ] && grep -q 'exited while its functions were being attached' "$T/lines" ||
    fail "target killed while attaching: expected one line, got $(wc -l <"$T/lines"): $(head -n 3 "$T/lines")"

# make retop in a fresh build directory: the skeleton is a prerequisite.
mkdir "$T/build"
(cd "$T/build" && "$abs_top_srcdir/configure" --quiet >/dev/null 2>&1) || fail "configure failed in a fresh directory"
(cd "$T/build" && make -n retop >"$T/make.out" 2>&1) || fail "make -n retop failed: $(tail -n 3 "$T/make.out")"
python3 - "$T/make.out" <<'PY' || fail "make retop in a fresh build directory would compile the tracer before generating src/retop.skel.h"
import sys
text = open(sys.argv[1]).read()
skel, tracer = text.find("gen skeleton"), text.find("tracer.c")
sys.exit(0 if 0 <= skel < tracer else 1)
PY
echo "FIFO refused in one line; first cpu $cpu%; target killed mid-attach: one line, exit 1; make retop generates the skeleton first"
