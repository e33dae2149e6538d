#!/bin/sh
# buf from the npm registry (not built here: Go 1.27.3, stripped), a short
# program traced from its first instruction: `buf format -d` over N proto
# files, held at its exec until retop's probes are in (tests/realbin/held.py).
# buf formats each file in one call of bufformat.FormatFile, all of them in
# one call of bufformat.FormatBucket: retop counts exactly N and 1, as many as
# the diffs buf prints; the process exits 0 as without retop; retop reports
# "detached: process exited" and ends by itself; the durations nest inside
# one another and inside buf's own run time.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../realbin/lib.sh
. "$abs_top_srcdir/tests/realbin/lib.sh"
need_root
need_cmd python3
need_retop

N=12
F=github.com/bufbuild/buf/private/buf/bufformat
file="$F.FormatFile" bucket="$F.FormatBucket"
realbin_fetch buf-1.75.0

# N files, each in need of formatting, each with its own package.
mkdir -p "$T/protos"
i=1
while [ "$i" -le "$N" ]; do
    printf 'syntax = "proto3";\npackage retop.p%d;\nmessage   M%d {  string  name = 1;\n int32 id=2; }\n' \
        "$i" "$i" >"$T/protos/f$i.proto"
    i=$((i + 1))
done

# HOME and the cache in $T: buf writes nothing of the user's.
(cd "$T" && HOME=$T BUF_CACHE_DIR=$T/bufcache exec python3 "$REALBIN/held.py" \
    "$T/pid" "$T/go" "$T/status" "$BIN" format -d protos >"$T/fmt.out" 2>"$T/fmt.err") &
hp=$!
track_pid "$hp"
wait_file "$T/pid" 10 || fail "buf did not start under held.py: $(head -n 3 "$T/fmt.err")"
bp=$(cat "$T/pid")
track_pid "$bp"

"$RETOP" -b -p "$bp" -t "$file" -t "$bucket" -d 0.2 -o json >"$T/snap" 2>"$T/err" &
rp=$!
track_pid "$rp"
sc wait "$T/snap" 1 20 "$rp" || fail "retop did not attach to buf: $(head -n 3 "$T/err")"
sc status "$T/snap" tracing "$file" "$bucket" || fail "buf: not every function is traced"
touch "$T/go"
wait_file "$T/status" 30 || fail "buf did not end within 30 s of its release: $(head -n 3 "$T/fmt.err")"
wait "$hp" || fail "held.py failed: $(tail -n 3 "$T/fmt.err")"
read -r code wall <"$T/status"
[ "$code" -eq 0 ] || fail "buf format -d exited $code under tracing: $(head -n 3 "$T/fmt.err")"
sc gone "$rp" 5 || fail "retop -b -p still runs 5 s after buf exited"
if wait "$rp"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "retop exited $rc after buf exited: $(head -n 3 "$T/err")"

# buf's own account: one diff per file, each file once.
diffs=$(grep -c '^--- protos/f[0-9]*\.proto' "$T/fmt.out" || true)
[ "$diffs" -eq "$N" ] || fail "buf format -d printed $diffs diffs for $N unformatted files: $(head -n 5 "$T/fmt.out")"
printf '{"calls": %d, "per_func": {"%s": {"calls": %d}, "%s": {"calls": 1}}}\n' \
    "$N" "$file" "$N" "$bucket" >"$T/want.json"

python3 - "$T/snap" "$T/want.json" "$wall" "$file" "$bucket" <<'PY' ||
import json, sys
snap = json.loads(open(sys.argv[1]).read().strip().split("\n")[-1])
want = json.load(open(sys.argv[2]))["per_func"]
wall = int(sys.argv[3])
f = {x["name"]: x for x in snap["functions"]}
ff, fb = f[sys.argv[4]], f[sys.argv[5]]
bad = []
for x in (ff, fb):
    if x["status"] != "detached: process exited":
        bad.append("%s: status %r, expected 'detached: process exited'" % (x["name"], x["status"]))
    for k, v in (("calls", want[x["name"]]["calls"]), ("in_flight", 0), ("orphans", 0), ("unmatched_returns", 0)):
        if x[k] != v:
            bad.append("%s: %s is %s, expected %s" % (x["name"], k, x[k], v))
    if not 0 < x["mean_ns"] <= x["max_ns"]:
        bad.append("%s: mean %s ns, max %s ns" % (x["name"], x["mean_ns"], x["max_ns"]))
# Every FormatFile runs inside the one FormatBucket, which runs inside buf's
# life from its release to its exit.
if not ff["max_ns"] <= fb["max_ns"] <= wall:
    bad.append("FormatFile max %s ns, FormatBucket %s ns, buf's run %d ns: not nested" % (ff["max_ns"], fb["max_ns"], wall))
for b in bad:
    print("realbin-buf: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
    fail "buf format -d over $N files: retop's last snapshot is wrong (above)"
echo "buf 1.75.0 (Go 1.27.3) format -d, $N files: FormatFile $(sc get "$T/snap" "$file" calls) calls \
(mean $(sc get "$T/snap" "$file" mean_ns) ns), FormatBucket $(sc get "$T/snap" "$bucket" calls) \
($(sc get "$T/snap" "$bucket" mean_ns) ns) in buf's $((wall / 1000)) us; exit 0"
