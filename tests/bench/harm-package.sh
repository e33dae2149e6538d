#!/bin/sh
# What tracing a whole package costs a real server under real load, at the
# defaults: Debian's Prometheus ingesting 40,000 series a second and
# answering queries one after the other (tests/prom_load.sh), while retop
# traces every function of its tsdb package (some 800).  Interleaved R
# times: retop (RETOP) and, with BASE set to another retop binary, that one,
# side by side on the same Prometheus.  Each run: queries for 4 s
# untraced, SECS s traced (retop -b -o json -d 1 from before its first
# snapshot to SIGINT), 4 s after.
#
# Prints per run: queries a second untraced, traced and after; the probe
# hits a second the budget counts (probe_cost.hits_per_s), snapshot by
# snapshot, their mean over the first 10 s and over the run, and the
# busiest second, against the budget; and the mean CPU the traps took, in
# ms/s.  Then the medians per binary.  The budget is hits in any second
# (10,000 by default); what a hit costs the target depends on the machine
# (20-45 us on the 2-core VM, about a microsecond on bare metal), the hits
# do not.
#
# Environment: R (3), SECS (15), BASE (a retop binary to put beside),
# abs_top_builddir (the build tree, default SRCDIR/build).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../prom_load.sh
. "$abs_top_srcdir/tests/prom_load.sh"

R=${R:-3}
SECS=${SECS:-15}
pkg='github.com/prometheus/prometheus/tsdb.*'

need_root
need_cmd python3
need_cmd prometheus
need_retop
[ -z "${BASE-}" ] || [ -x "$BASE" ] || fail "BASE=$BASE is not an executable retop"

prom_start
cur=$RETOP
# run NAME BIN I: one run of BIN; its figures in $T/NAME.I.json.
run() {
    prom_queries 4 "$T/q0" || fail "a query failed before tracing: $(tail -n 2 "$T/q0")"
    RETOP=$2
    retop_batch "$T/$1.$3.snap" -p "$prom" -t "$pkg" -d 1
    prom_queries "$SECS" "$T/q1" || fail "a query failed while $1 traced: $(tail -n 2 "$T/q1")"
    retop_stop "$prom"
    RETOP=$cur
    prom_queries 4 "$T/q2" || fail "a query failed after $1 traced: $(tail -n 2 "$T/q2")"
    python3 - "$T/$1.$3.snap" "$(cat "$T/q0")" "$(cat "$T/q1")" "$(cat "$T/q2")" "$SECS" \
        >"$T/$1.$3.json" <<'PY' || fail "cannot read the snapshots of $1"
import json, sys
snaps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
q0, q1, q2, secs = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
# The first snapshot is the attach's; the rest cover the queries.
hits = [s["probe_cost"]["hits_per_s"] for s in snaps[1:]]
cpu = [s["probe_cost"]["cpu_ns_per_s"] / 1e6 for s in snaps[1:]]
budget = snaps[-1]["budget_hits_per_s"]
first = hits[:10]
print(json.dumps({"q0": q0 / 4.0, "q1": q1 / secs, "q2": q2 / 4.0, "hits": hits,
                  "first10": sum(first) / max(len(first), 1), "mean": sum(hits) / max(len(hits), 1),
                  "max": max(hits or [0]), "budget": budget, "cpu": sum(cpu) / max(len(cpu), 1)}))
PY
    python3 - "$1" "$T/$1.$3.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))
b = r["budget"]
print("%-6s queries/s %.2f untraced, %.2f traced, %.2f after; hits/s first 10 s %.0f (%.2fx the budget), "
      "run %.0f (%.2fx), busiest second %.0f (%.2fx); traps %.0f ms/s"
      % (sys.argv[1], r["q0"], r["q1"], r["q2"], r["first10"], r["first10"] / b, r["mean"], r["mean"] / b,
         r["max"], r["max"] / b, r["cpu"]))
print("       hits/s by second: " + " ".join("%.0f" % h for h in r["hits"]))
PY
}

i=1
while [ "$i" -le "$R" ]; do
    run retop "$cur" "$i"
    [ -z "${BASE-}" ] || run base "$BASE" "$i"
    i=$((i + 1))
done
python3 - "$T" "$R" "${BASE:+base}" <<'PY'
import json, statistics, sys
t, r, names = sys.argv[1], int(sys.argv[2]), ["retop"] + ([sys.argv[3]] if sys.argv[3] else [])
for n in names:
    rs = [json.load(open("%s/%s.%d.json" % (t, n, i))) for i in range(1, r + 1)]
    med = lambda k: statistics.median(x[k] for x in rs)
    print("median of %d, %s: queries/s %.2f untraced, %.2f traced; hits/s first 10 s %.2fx the budget, "
          "run %.2fx, busiest second %.2fx; traps %.0f ms/s"
          % (r, n, med("q0"), med("q1"), med("first10") / rs[0]["budget"], med("mean") / rs[0]["budget"],
             med("max") / rs[0]["budget"], med("cpu")))
PY
