#!/bin/sh
# The full listing against Go's own tables, side by side in one run, R
# rounds interleaved (default: Debian's prometheus, 63,128 functions):
#   retop full listing    retop -l -x BIN -o json >/dev/null: every function
#                         with every RET site decoded and its line
#   gosym names           gosym-oracle names BIN: Go's debug/gosym reading
#                         the table and every function's name alone
#   gosym                 gosym-oracle bench BIN: the same, and every entry,
#                         end and entry file:line
# each timed as a whole process (gosym also inside its process), with the
# CPU time (user + sys) of each.  Target: retop full listing / gosym names
# whole process <= 3 (medians).  Each round's listing must be the same
# bytes and hold one line per function gosym counts, besides the functions
# that exist only inlined (rows of their own, "inline_only":true, which
# gosym does not list).
#
# Environment: R (7), LISTING_BIN, abs_top_builddir (default SRCDIR/build).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

R=${R:-7}
BIN=${LISTING_BIN:-/usr/bin/prometheus}

need_retop
need_cmd python3
need_cmd md5sum
[ -r "$BIN" ] || skip "$BIN not found: install the Debian package prometheus or set LISTING_BIN"
need_fixture gosym-oracle

# shellcheck disable=SC2016 # expanded by that sh -c, not here
to_file='out=$1; shift; exec "$@" >"$out"'
TIME=$here/timecmd.py

echo "listing: $BIN, $R rounds interleaved, $(nproc) CPUs"
: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    {
        printf 'names %s ' "$i"
        python3 "$TIME" -- "$ORACLE" names "$BIN"
        printf 'gosym %s ' "$i"
        python3 "$TIME" -- "$ORACLE" bench "$BIN"
        printf 'full %s ' "$i"
        python3 "$TIME" -- sh -c "$to_file" sh "$T/list.$i" "$RETOP" -l -x "$BIN" -o json
    } >>"$T/results"
    md5sum <"$T/list.$i" | cut -d' ' -f1 >>"$T/sums"
    grep -c '"inline_only":false' "$T/list.$i" >>"$T/lines"
    rm -f "$T/list.$i"
    i=$((i + 1))
done

python3 - "$T/results" "$T/sums" "$T/lines" <<'EOF'
import json, sys, statistics as st
res = {}
for line in open(sys.argv[1]):
    mode, rep, js = line.split(" ", 2)
    res.setdefault(mode, []).append(json.loads(js))
sums = set(open(sys.argv[2]).read().split())
lines = set(int(x) for x in open(sys.argv[3]).read().split())
broken = []
for m in ("names", "gosym", "full"):
    for d in res[m]:
        if d["rc"] != 0:
            broken.append("%s exited %d: %s" % (m, d["rc"], d["stderr"].strip()))
if not broken:
    for d in res["gosym"] + res["names"]:
        g = json.loads(d["stdout_tail"])
        d["funcs"], d["inproc_s"] = g["funcs"], g["seconds"]
    funcs = res["gosym"][0]["funcs"]
    if {d["funcs"] for d in res["names"]} != {funcs}:
        broken.append("gosym names counts other functions than gosym")
    if len(sums) != 1:
        broken.append("the listing differs from round to round (%d versions)" % len(sums))
    if lines != {funcs}:
        broken.append("the listing has %s lines, gosym %d functions" % (sorted(lines), funcs))
if broken:
    print("  BROKEN:")
    for b in sorted(set(broken)):
        print("    " + b)
    sys.exit(1)
print("\n  round   gosym names (in-process, cpu)   gosym (in-process, cpu)"
      "   retop full listing (cpu)   / names   / gosym")
for i, (n, g, f) in enumerate(zip(res["names"], res["gosym"], res["full"]), 1):
    print("  %5d %9.3f s (%.3f s, %.3f s) %9.3f s (%.3f s, %.3f s) %12.3f s (%.3f s) %9.2f %9.2f" % (
        i, n["total_s"], n["inproc_s"], n["cpu_s"], g["total_s"], g["inproc_s"], g["cpu_s"],
        f["total_s"], f["cpu_s"], f["total_s"] / n["total_s"], f["total_s"] / g["total_s"]))
med = lambda m, k: st.median(d[k] for d in res[m])
n, g, f = med("names", "total_s"), med("gosym", "total_s"), med("full", "total_s")
nc, gc, fc = med("names", "cpu_s"), med("gosym", "cpu_s"), med("full", "cpu_s")
print("\n  functions: %d, one line each (and the inline-only ones)" % funcs)
print("  medians: gosym names %.3f s (in-process %.3f s, cpu %.3f s), gosym %.3f s (in-process"
      " %.3f s, cpu %.3f s), retop full listing %.3f s (cpu %.3f s)"
      % (n, med("names", "inproc_s"), nc, g, med("gosym", "inproc_s"), gc, f, fc))
print("  full listing / gosym names, whole process: %.2f   (target <= 3: %s)"
      % (f / n, "met" if f / n <= 3 else "NOT met"))
print("  full listing / gosym names, cpu time:      %.2f" % (fc / nc))
print("  full listing / gosym, whole process:       %.2f" % (f / g))
print("  full listing / gosym, cpu time:            %.2f" % (fc / gc))
EOF
