#!/bin/sh
# retop attaches to the file its verdict approved, never to whatever a path
# names at that moment.  The traced path flips between a symlink to the
# traced binary and a hard link to another Go program (the decoy), every
# few milliseconds, while retop -x attaches, and while the budget takes
# probes out and puts them back (a hot loop keeps it moving them).  All
# along, the decoy's running code must stay byte for byte its file's: an
# int3 there would be a probe in a binary no verdict approved.  The decoy
# is never a target, and retop says once that the path names another
# program, which it does not follow.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture lifecycle-default payments-default
d=$T/d
mkdir "$d"
cp "$FIXTURES/lifecycle-default" "$d/good"
cp "$FIXTURES/payments-default" "$d/decoy"
ln -s good "$d/app"

# The decoy runs all along, from its own name.
"$d/decoy" -ready "$T/decoy.ready" -loop -workers 2 &
decoy=$!
track_pid "$decoy"
wait_file "$T/decoy.ready" 10 || fail "the decoy did not start"
kill -USR1 "$decoy"
# The traced program: one long round of calls, over the budget.
"$d/app" -ready "$T/good.ready" -calls 400000 -workers 2 -out "$T/good.out" &
good=$!
track_pid "$good"
wait_file "$T/good.ready" 10 || fail "the traced program did not start"

# Watch the decoy's code in memory against its file, and flip the path.
python3 - "$decoy" "$d" 6 >"$T/watch.out" 2>&1 <<'PY' &
import os, sys, time
pid, d, secs = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
path = os.path.join(d, "decoy")
st = os.stat(path)
data = open(path, "rb").read()
ranges = []
for line in open("/proc/%d/maps" % pid):
    f = line.split()
    if len(f) >= 6 and "x" in f[1] and f[4] == str(st.st_ino):
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        ranges.append((lo, hi, int(f[2], 16)))
if not ranges:
    sys.exit("no executable mapping of the decoy in /proc/%d/maps" % pid)
mem = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
flips = checks = 0
end = time.time() + secs
while time.time() < end:
    # A regular file (the decoy), then a symlink (the traced binary), each
    # put in place by rename().
    os.link(path, os.path.join(d, "tmp"))
    os.rename(os.path.join(d, "tmp"), os.path.join(d, "app"))
    time.sleep(0.003)
    os.symlink("good", os.path.join(d, "tmp"))
    os.rename(os.path.join(d, "tmp"), os.path.join(d, "app"))
    time.sleep(0.003)
    flips += 1
    if flips % 8:
        continue
    for lo, hi, off in ranges:
        got = os.pread(mem, hi - lo, lo)
        want = data[off:off + len(got)]
        if got != want:
            at = next(i for i in range(len(want)) if got[i] != want[i])
            sys.exit("the decoy's code differs from its file at file offset 0x%x: %02x, not %02x"
                     % (off + at, got[at], want[at]))
    checks += 1
print("%d flips, %d checks of %d bytes" % (flips, checks, sum(h - l for l, h, _ in ranges)))
PY
watch=$!
track_pid "$watch"

snap=$T/snap
retop_batch "$snap" -x "$d/app" -t main.Work -d 0.2
kill -USR1 "$good"
wait "$watch" || fail "$(cat "$T/watch.out")"
retop_snapshots 2
running "$decoy" || fail "the decoy died"
running "$RETOP_PID" || fail "retop died: $(tail -n 3 "$snap.err")"
python3 - "$snap" "$decoy" <<'PY' || fail "the decoy was taken for a target"
import json, sys
decoy = int(sys.argv[2])
for line in open(sys.argv[1]):
    if line.strip() and any(t["pid"] == decoy for t in json.loads(line)["targets"]):
        sys.exit("FAIL: the decoy (PID %d) is among the targets: %s" % (decoy, line[:200]))
PY
[ "$(grep -c 'replaced by a binary without any of the traced functions: not followed' "$snap.err")" -eq 1 ] ||
    fail "expected one line saying the decoy is not followed: $(cat "$snap.err")"
moves=$(python3 -c '
import json, sys
modes = [json.loads(l)["functions"][0]["mode"] for l in open(sys.argv[1]) if l.strip()]
print(len(set(modes)))' "$snap")
[ "$moves" -ge 2 ] || fail "the budget never moved main.Work's probes (one mode throughout): the resumes were not exercised"
echo "path flipped between the traced binary and a decoy while retop attached and the budget moved probes: $(cat "$T/watch.out"); the decoy's code never changed"
