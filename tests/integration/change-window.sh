#!/bin/sh
# What changed since a baseline window, at the default settings: retop -b
# --baseline 2 on the change fixture (main.Slower 100 us, main.Steady
# 150 us a call).  Once the first 2 s of tracing are marked, SIGUSR1
# doubles main.Slower.
# - change is null in every snapshot before the mark, against "window" in
#   every one after, and the mark came 2 s (within a second) into tracing;
# - calls_before is what the first 2 s held (at least the minimum);
# - main.Slower is significant, its p50_ratio within 10% of the ratio the
#   program measured itself (after SIGUSR1 over before); main.Steady not.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture change-default

out=$T/change.out
start_fixture change-default -out "$out"
retop_batch "$T/snap" -p "$FIXTURE_PID" -t 'main.S*' -d 0.5 --baseline 2
# last_change SECONDS PYTHON-EXPR: until main.Slower's change in the last
# snapshot satisfies the expression of c.
last_change() {
    python3 - "$RETOP_SNAP" "$1" "$2" <<'PY'
import json, sys, time
path, limit, expr = sys.argv[1], time.time() + float(sys.argv[2]), sys.argv[3]
while True:
    try:
        lines = [l for l in open(path) if l.endswith("\n")]
        f = [f for f in json.loads(lines[-1])["functions"] if f["name"] == "main.Slower"][0]
        if eval(expr, {"c": f["change"]}):
            sys.exit(0)
    except (IndexError, KeyError, ValueError, TypeError):
        pass
    if time.time() > limit:
        sys.exit(1)
    time.sleep(0.05)
PY
}
last_change 6 'c is not None' || fail "no baseline 6 s into tracing: $(tail -c 600 "$RETOP_SNAP")"
kill -USR1 "$FIXTURE_PID"
# Most of after is then the slower calls.
last_change 20 'c["calls_after"] >= 4000' ||
    fail "fewer than 4000 calls after the baseline: $(tail -c 600 "$RETOP_SNAP")"
retop_stop "$FIXTURE_PID"
kill -TERM "$FIXTURE_PID"
fixture_result "$out"

python3 - "$RETOP_SNAP" "$out" <<'PY' || fail "the change against the baseline window"
import json, sys
snaps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
phases = json.load(open(sys.argv[2]))["phases"]
bad = []
start = snaps[0]["time"] - snaps[0]["interval_s"]  # tracing began
marked = [i for i, s in enumerate(snaps) if s["functions"][0]["change"] is not None]
if not marked:
    sys.exit(print("FAIL: no snapshot with a change", file=sys.stderr) or 1)
first = marked[0]
if marked != list(range(first, len(snaps))):
    bad.append("change null again after the mark: snapshots %s" % marked)
t_mark = snaps[first]["time"] - start
t_before = snaps[first - 1]["time"] - start if first else 0
# Marked on the engine's clock: at or after 2 s, within a second (the
# snapshots' wall-clock times are taken a few ms into each sample).
if not (t_mark >= 1.9 and t_before < 3.0):
    bad.append("baseline seen at %.2f s (the snapshot before at %.2f s), not 2 s into tracing" % (t_mark, t_before))
fs = {f["name"]: f for f in snaps[-1]["functions"]}
for name in ("main.Slower", "main.Steady"):
    c = fs[name]["change"]
    own = phases[1][name]["p50_ns"] / phases[0][name]["p50_ns"]
    print("%s: retop p50 x%s p99 x%s, significant %s (p=%s), calls %d -> %d; the program's p50 x%.3f"
          % (name, c["p50_ratio"], c["p99_ratio"], c["significant"], c["p_value"],
             c["calls_before"], c["calls_after"], own))
    if c["against"] != "window":
        bad.append("%s: against %r" % (name, c["against"]))
    # The first 2 s hold a few hundred calls of each (~700 a second).
    if not (20 <= c["calls_before"] <= 3 * 1000):
        bad.append("%s: %d calls before the 2 s baseline" % (name, c["calls_before"]))
    if name == "main.Slower":
        if c["significant"] is not True:
            bad.append("main.Slower, twice as slow, not flagged: %s" % c)
        elif abs(c["p50_ratio"] / own - 1) > 0.10:
            bad.append("main.Slower: p50_ratio %s, the program's own %.3f" % (c["p50_ratio"], own))
    elif c["significant"] is not False:
        bad.append("main.Steady, unchanged, flagged %s: %s" % (c["significant"], c))
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "change-window: --baseline 2 marked at 2 s; main.Slower flagged with the program's own ratio, main.Steady ~"
