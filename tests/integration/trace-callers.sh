#!/bin/sh
# Latency by caller: main.Work is called from main.FastPath (4 ms of spin)
# and main.SlowPath (12 ms). retop's per-caller counts must equal the
# program's own exactly, and its per-caller means be within 5% of the
# durations each caller measured around its call with the Go clock, but for
# what a preemption outside retop's window added to the calls the program
# saw stretched (retop may miss it, no more).  Then a
# planted outlier: the top of `slowest`, with its caller, the goroutine id
# the program read from runtime.Stack, its duration, its start time and its
# arguments (--args): an int and a string (its first 64 bytes, then "..."),
# and its result, read at the RET.  With --slow 10ms, every call of 10 ms
# or more is counted (exactly the program's own count) and listed.
# Both as built by default and as a PIE, whose return addresses are the
# load address plus the link address: retop names the callers all the same.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture callers-default callers-pie

for v in default pie; do
snap=$T/$v.snap out=$T/$v.out calls=90
start_fixture callers-$v -calls $calls -workers 2 -out "$out"
fixture=$FIXTURE_PID
retop_batch "$snap" -p "$fixture" -t main.Work --args 'main.Work' --slow 10ms -d 0.2
# A second retop on the same function, text for a person: both count alike.
"$RETOP" -b -p "$fixture" -t main.Work --args 'main.Work' --slow 10ms -d 0.2 >"$T/$v.txt" 2>"$T/err.txt" &
rt=$!
track_pid "$rt"
# Its first snapshot, printed once every probe is in.
n=150
until [ -s "$T/$v.txt" ]; do
    [ "$n" -gt 0 ] && kill -0 "$rt" 2>/dev/null || fail "the text retop did not attach: $(head -n 3 "$T/err.txt")"
    n=$((n - 1))
    sleep 0.1
done
fixture_go "$out"
retop_snapshots 1
kill -INT "$rt"
retop_stop
if wait "$rt"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "the text retop exited $rc after SIGINT: $(head -n 3 "$T/err.txt")"
# Text: the count over 10 ms in the last snapshot, and the planted call
# listed with its caller, arguments and result.
# Exact but for the fast path's calls that a preemption stretched past 10 ms
# on the program's clock: retop's interval, inside the program's, may miss
# the preemption (the program counts them in fast_over).
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["over_10ms"])' "$out")
fast_over=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["callers"]["main.FastPath"].get("over_10ms", 0))' "$out")
got=$(sed -n 's/^    >= 10.0ms: \([0-9]*\) calls.*/\1/p' "$T/$v.txt" | tail -n 1)
[ -n "$got" ] && [ "$got" -le "$want" ] && [ "$got" -ge $((want - fast_over)) ] || fail "callers-$v: text: $got calls >= 10ms, the program counted $want: $(grep -A2 "^FUNCTION" "$T/$v.txt" | tail -n 3 | tr "\n" " ")"
res=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["outlier"]["result"])' "$out")
grep -Eq "^ +[0-9.]+ms  goroutine [0-9]+  from main\.Planted: us=500000 tag=\"planted: \\\\x1b\]52;c;Zm9yZ2Vk\\\\x07.*\\\\nmain\.Fake 9\\\\r\\\\xc2\\\\x9b.*\.\.\.\" -> r0=$res\$" "$T/$v.txt" ||
    fail "callers-$v: text: no line for the planted call, its string escaped: $(grep -m 3 'from main.Planted' "$T/$v.txt")"
# The planted string's bytes reach no terminal: no control byte but the
# newlines retop writes, no C1 control, no line it did not write.
python3 - "$T/$v.txt" <<'PY' || fail "callers-$v: text: the target's bytes reached the output raw"
import re, sys
b = open(sys.argv[1], "rb").read()
bad = re.findall(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", b)
forged = [l for l in b.split(b"\n") if l.startswith(b"main.Fake")]
if bad or forged:
    print("%d control bytes, %d forged lines" % (len(bad), len(forged)))
    sys.exit(1)
PY

sc exact "$snap" "$out" main.Work || fail "callers-$v: main.Work: total counts differ from the fixture's"
python3 - "$snap" "$out" <<'PY' || fail "callers-$v: latency by caller differs from the fixture's own clock"
import json, sys
snap = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
fx = json.load(open(sys.argv[2]))
work = [f for f in snap["functions"] if f["name"] == "main.Work"][0]
rows = {r["name"]: r for r in work["callers"]}
bad = False
if set(rows) != {"main.FastPath", "main.SlowPath", "main.Planted"}:
    print("callers: %s, expected main.FastPath, main.SlowPath and main.Planted" % sorted(rows))
    sys.exit(1)
if rows["main.Planted"]["calls"] != 1:
    print("main.Planted: %d calls, expected 1" % rows["main.Planted"]["calls"])
    bad = True
for name, own in fx["callers"].items():
    r = rows[name]
    if r["calls"] != own["calls"]:
        print("%s: retop counts %d calls, the program %d" % (name, r["calls"], own["calls"]))
        bad = True
    # retop's window is inside the program's: a preemption around a trap,
    # outside the window, is on the program's clock only.  What the calls
    # the program saw stretched added over its median may be missing from
    # retop's mean, no more; the rest within 5%.
    err = abs(r["mean_ns"] - own["mean_ns"]) / own["mean_ns"]
    lo = own["mean_ns"] - own.get("stretch_ns", 0) / own["calls"]
    if not lo * 0.95 <= r["mean_ns"] <= own["mean_ns"] * 1.05:
        print("%s: retop mean %d ns, the program's %d ns (%.1f%% off; %d ns of it its stretched calls)"
              % (name, r["mean_ns"], own["mean_ns"], 100 * err, own["mean_ns"] - lo))
        bad = True
    if not r["p50_ns"] <= r["p99_ns"]:
        print("%s: p50 %d > p99 %d" % (name, r["p50_ns"], r["p99_ns"]))
        bad = True
    print("%s: %d calls (program %d), mean %d ns (program %d ns, %.2f%% off, %d ns stretched), p50 %d ns (program %d ns), p99 %d ns"
          % (name, r["calls"], own["calls"], r["mean_ns"], own["mean_ns"], 100 * err, own.get("stretch_ns", 0), r["p50_ns"], own["p50_ns"], r["p99_ns"]))
if work["callers"][0]["name"] != "main.FastPath":
    print("callers not sorted busiest first: %s" % [r["name"] for r in work["callers"]])
    bad = True
sys.exit(1 if bad else 0)
PY
python3 - "$snap" "$out" <<'PY' || fail "callers-$v: the planted outlier is not the top of slowest, or differs from what the program saw"
import json, sys
snap = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
fx = json.load(open(sys.argv[2]))
own = fx["outlier"]
work = [f for f in snap["functions"] if f["name"] == "main.Work"][0]
if not work["slowest"]:
    print("main.Work: no slowest call")
    sys.exit(1)
top = work["slowest"][0]
bad = False
durs = [c["duration_ns"] for c in work["slowest"]]
if durs != sorted(durs, reverse=True) or len(durs) != 10:
    print("slowest: %d calls, not longest first: %s" % (len(durs), durs))
    bad = True
for k, want in (("caller", own["caller"]), ("goid", own["goid"])):
    if top[k] != want:
        print("slowest[0].%s = %r, the program saw %r" % (k, top[k], want))
        bad = True
err = abs(top["duration_ns"] - own["duration_ns"]) / own["duration_ns"]
if err > 0.05 or top["duration_ns"] < own["spin"]:
    print("slowest[0] lasted %d ns, the program measured %d ns" % (top["duration_ns"], own["duration_ns"]))
    bad = True
# retop reads the string's first 64 bytes (not characters).
tag = own["tag"].encode()
want_args = {"us": own["us"], "tag": tag[:64].decode(errors="replace") + ("..." if len(tag) > 64 else "")}
if top.get("args") != want_args:
    print("slowest[0].args = %r, the program passed %r" % (top.get("args"), want_args))
    bad = True
if top.get("results") != {"r0": own["result"]}:
    print("slowest[0].results = %r, the program got %r" % (top.get("results"), own["result"]))
    bad = True
if abs(top["time"] - own["start"]) > 0.05:
    print("slowest[0] started at %.6f, the program's clock says %.6f" % (top["time"], own["start"]))
    bad = True
print("slowest[0]: %s, goroutine %d (program %d), %d ns (program %d ns), started %.3f s from the program's clock, args %s, results %s"
      % (top["caller"], top["goid"], own["goid"], top["duration_ns"], own["duration_ns"], top["time"] - own["start"], json.dumps(top.get("args")), json.dumps(top.get("results"))))
sys.exit(1 if bad else 0)
PY
python3 - "$snap" "$out" <<'PY' || fail "callers-$v: --slow 10ms: count or list differs from the program's own"
import json, sys
snaps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fx = json.load(open(sys.argv[2]))
works = [[f for f in s["functions"] if f["name"] == "main.Work"][0] for s in snaps]
last = works[-1]
bad = False
if snaps[-1]["slow_ns"] != 10000000:
    print("slow_ns %r, expected 10000000" % snaps[-1]["slow_ns"])
    bad = True
fast_over = fx["callers"]["main.FastPath"].get("over_10ms", 0)
if not fx["over_10ms"] - fast_over <= last["slow_calls_total"] <= fx["over_10ms"]:
    print("calls >= 10ms: retop %d, the program %d (%d of them fast calls it saw stretched)"
          % (last["slow_calls_total"], fx["over_10ms"], fast_over))
    bad = True
listed = [c for w in works for c in w["slow_calls"]]
per = sum(w["slow_calls_interval"] for w in works)
if per != last["slow_calls_total"] or last["slowest_lost"]:
    print("intervals add up to %d of %d; %d lost" % (per, last["slow_calls_total"], last["slowest_lost"]))
    bad = True
short = [c["duration_ns"] for c in listed if c["duration_ns"] < 10000000]
callers = sorted(set(c["caller"] for c in listed))
# The slow path's and the planted call; a fast call only if it ran late
# (the program counted it too).
if short or "main.Planted" not in callers or not set(callers) <= {"main.FastPath", "main.Planted", "main.SlowPath"}:
    print("listed: %d calls, callers %s, shorter than 10ms: %s" % (len(listed), callers, short))
    bad = True
if any("args" not in c or "results" not in c for c in listed):
    print("a listed slow call has no arguments or results")
    bad = True
print("--slow 10ms: %d calls (program %d), %d listed from %s" % (last["slow_calls_total"], fx["over_10ms"], len(listed), callers))
sys.exit(1 if bad else 0)
PY
kill "$fixture"
wait "$fixture" 2>/dev/null
done
