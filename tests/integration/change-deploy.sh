#!/bin/sh
# What a deploy changed, at the default settings, as an operator deciding
# on a rollback would read it.  retop -x traces the change fixture's path;
# a second build (change-slow: main.Slower twice as slow, main.Steady the
# same) is renamed over the path, a new instance starts from it, and the
# old one stops, as a rolling restart does.
# - following the deploy marks each function against the old binary: its
#   change (JSON) is against "binary", null before the deploy;
# - while both instances run, after holds the calls of both; once the old
#   one has exited, after starts again (its calls drop), and is then the
#   new binary's calls alone: at most the new instance's calls; before
#   stays the old binary's, at most the old instance's calls;
# - main.Slower is significant, its p50_ratio within 10% of the ratio the
#   two instances measured themselves; main.Steady is not ("~" in text).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture change-default change-slow
app=$T/app
cp "$FIXTURES/change-default" "$app"

# launch NAME: an instance from the path as it is now; its PID in $LAUNCHED.
launch() {
    "$app" -ready "$T/$1.ready" -out "$T/$1.out" &
    LAUNCHED=$!
    track_pid "$LAUNCHED"
    wait_file "$T/$1.ready" 10 || fail "the $1 instance did not start"
}
# change_has SECONDS PYTHON-EXPR: until the last snapshot's main.Slower
# and main.Steady both satisfy the expression of c, their change.
change_has() {
    python3 - "$RETOP_SNAP" "$1" "$2" <<'PY' || return 1
import json, sys, time
path, limit, expr = sys.argv[1], time.time() + float(sys.argv[2]), sys.argv[3]
while True:
    try:
        lines = [l for l in open(path) if l.endswith("\n")]
        fs = {f["name"]: f for f in json.loads(lines[-1])["functions"]}
        if all(eval(expr, {"c": fs[n]["change"]}) for n in ("main.Slower", "main.Steady")):
            sys.exit(0)
    except (IndexError, KeyError, ValueError, TypeError):
        pass
    if time.time() > limit:
        sys.exit(1)
    time.sleep(0.1)
PY
}

launch old
old=$LAUNCHED
retop_batch "$T/snap" -v -x "$app" -t 'main.S*' -d 0.5
# The old binary's calls: a few seconds of them.
sleep 3
change_has 1 'c is None' || fail "a change before any deploy: $(tail -c 600 "$RETOP_SNAP")"

# The deploy: the new build renamed over the path, a new instance from it.
cp "$FIXTURES/change-slow" "$app.new"
mv "$app.new" "$app"
n=0
until grep -q "was replaced (a deploy): tracing 2 of 2 functions in the new binary too" "$RETOP_ERR"; do
    [ "$n" -lt 50 ] || fail "retop did not follow the deploy: $(tail -n 2 "$RETOP_ERR")"
    n=$((n + 1))
    sleep 0.1
done
launch new
new=$LAUNCHED
change_has 5 'c is not None and c["against"] == "binary"' ||
    fail "no change against the binary after the deploy: $(tail -c 600 "$RETOP_SNAP")"
sleep 1
# The old instance stops; after then starts again, the new binary alone.
kill -TERM "$old"
wait "$old" || fail "the old instance exited $? under tracing"
grep -q "no process runs binary 0 .* any more: its probes are out" "$RETOP_ERR" ||
    sc wait "$RETOP_SNAP" $(($(sc lines "$RETOP_SNAP") + 3)) 5 "$RETOP_PID"
change_has 20 'c["calls_after"] >= 3000' ||
    fail "fewer than 3000 calls after the old instance exited: $(tail -c 600 "$RETOP_SNAP")"
kill -TERM "$new"
wait "$new" || fail "the new instance exited $? under tracing"
retop_stop

python3 - "$RETOP_SNAP" "$T/old.out" "$T/new.out" <<'PY' || fail "the deploy's change"
import json, sys
snaps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
old, new = (json.load(open(p))["phases"][0] for p in sys.argv[2:4])
bad = []
# The last snapshot with calls after the old instance exited (the new
# one's exit detaches nothing under -x; its last calls are in).
fs = {f["name"]: f for f in snaps[-1]["functions"]}
for name in ("main.Slower", "main.Steady"):
    c = fs[name]["change"]
    own = new[name]["p50_ns"] / old[name]["p50_ns"]
    print("%s: retop p50 x%s p99 x%s, significant %s (p=%s), calls %d -> %d; the program's p50 x%.3f (%d -> %d calls)"
          % (name, c["p50_ratio"], c["p99_ratio"], c["significant"], c["p_value"],
             c["calls_before"], c["calls_after"], own, old[name]["calls"], new[name]["calls"]))
    if c["against"] != "binary":
        bad.append("%s: against %r" % (name, c["against"]))
    if not (20 <= c["calls_before"] <= old[name]["calls"]):
        bad.append("%s: %d calls before, the old instance made %d" % (name, c["calls_before"], old[name]["calls"]))
    if not (20 <= c["calls_after"] <= new[name]["calls"]):
        bad.append("%s: %d calls after, the new instance made %d" % (name, c["calls_after"], new[name]["calls"]))
    if c["error_share_before"] is not None or c["error_share_after"] is not None:
        bad.append("%s: error shares %s/%s where no failed call is counted" % (name, c["error_share_before"], c["error_share_after"]))
    if name == "main.Slower":
        if c["significant"] is not True:
            bad.append("main.Slower, twice as slow, not flagged: %s" % c)
        elif abs(c["p50_ratio"] / own - 1) > 0.10:
            bad.append("main.Slower: p50_ratio %s, the program's own %.3f" % (c["p50_ratio"], own))
    elif c["significant"] is not False:
        bad.append("main.Steady, unchanged, flagged %s: %s" % (c["significant"], c))
# Before the deploy, no change.
if any(f["change"] is not None for f in snaps[0]["functions"]):
    bad.append("a change in the first snapshot")
# After begins again when the old instance exits: main.Slower's calls
# after drop once, and before never moves.
ch = [f["change"] for s in snaps for f in s["functions"] if f["name"] == "main.Slower" and f["change"]]
after = [c["calls_after"] for c in ch]
drops = [i for i in range(1, len(after)) if after[i] < after[i - 1]]
if len(drops) != 1:
    bad.append("main.Slower's calls after dropped %d times (once: when the old instance exited): %s" % (len(drops), after))
elif after[drops[0] - 1] < 100:
    bad.append("main.Slower: only %d calls after while both instances ran" % after[drops[0] - 1])
if len(set(c["calls_before"] for c in ch)) != 1:
    bad.append("main.Slower's calls before moved: %s" % sorted(set(c["calls_before"] for c in ch)))
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "change-deploy: main.Slower flagged against the old binary with the program's own ratio, main.Steady ~"
