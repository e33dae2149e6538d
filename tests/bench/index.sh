#!/bin/sh
# Index time on a big stripped Go binary (default: the Go 1.19 compiler,
# ~14,000 functions), side by side in one run, R rounds interleaved:
#   retop index only      retop -l -x BIN zzzz-no-such-function (no match:
#                         the index is built, nothing listed; exits 1)
#   gosym in-process      gosym-oracle bench BIN (Go's debug/gosym, timed
#                         inside the process: no process start)
#   gosym whole process   gosym-oracle dump BIN >/dev/null
#   retop full listing    retop -l -x BIN -o json >/dev/null (with RET sites)
# and peak RSS (/usr/bin/time %M) of retop -V (baseline), index only and the
# full listing, against 3x the size of .gopclntab.
# Targets: gosym in-process / retop index only >= 2; full listing < 1 s.
#
# Environment: R (5), INDEX_BIN, abs_top_builddir (default SRCDIR/build).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
: "${abs_top_srcdir:=$(cd "$here/../.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir/build}"
# shellcheck source=../lib.sh
. "$here/../lib.sh"

R=${R:-5}
BIN=${INDEX_BIN:-/usr/lib/go-1.19/pkg/tool/linux_amd64/compile}
NOMATCH=zzzz-no-such-function

need_retop
need_cmd python3
need_cmd readelf
[ -x /usr/bin/time ] || skip "/usr/bin/time not found: apt-get install time"
[ -r "$BIN" ] || skip "$BIN not found: install golang-1.19-go or set INDEX_BIN"
need_fixture gosym-oracle

hex=$(readelf -SW "$BIN" | awk '{ for (i = 1; i < NF; i++) if ($i == ".gopclntab") print $(i + 4) }')
[ -n "$hex" ] || fail "$BIN has no .gopclntab section"
pclntab=$((0x$hex))

# to_null CMD...: run CMD with stdout to /dev/null, in this same process.
# shellcheck disable=SC2016 # expanded by that sh -c, not here
to_null='exec "$0" "$@" >/dev/null'
TIME=$here/timecmd.py

echo "index: $BIN, .gopclntab $pclntab bytes, $R rounds interleaved"
: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    {
        printf 'idx %s ' "$i"
        python3 "$TIME" -- "$RETOP" -l -x "$BIN" "$NOMATCH"
        printf 'gbench %s ' "$i"
        python3 "$TIME" -- "$ORACLE" bench "$BIN"
        printf 'gdump %s ' "$i"
        python3 "$TIME" -- sh -c "$to_null" "$ORACLE" dump "$BIN"
        printf 'full %s ' "$i"
        python3 "$TIME" -- sh -c "$to_null" "$RETOP" -l -x "$BIN" -o json
        for m in base idx full; do
            case $m in
            base) set -- -V ;;
            idx) set -- -l -x "$BIN" "$NOMATCH" ;;
            full) set -- -l -x "$BIN" -o json ;;
            esac
            /usr/bin/time -f %M -o "$T/rss" "$RETOP" "$@" >/dev/null 2>&1
            echo "rss_$m $i {\"kb\": $(tail -n 1 "$T/rss")}"
        done
    } >>"$T/results"
    i=$((i + 1))
done
"$RETOP" -l -x "$BIN" -o json 2>"$T/full.err" | wc -l >"$T/nfull"

python3 - "$T/results" "$pclntab" "$(cat "$T/nfull")" <<'EOF'
import json, sys, statistics as st
res = {}
for line in open(sys.argv[1]):
    mode, rep, js = line.split(" ", 2)
    res.setdefault(mode, []).append(json.loads(js))
pcln = int(sys.argv[2])
nfull = int(sys.argv[3])
broken = []
for d in res["idx"]:
    if d["rc"] != 1:
        broken.append("retop -l -x BIN (no match) exited %d, expected 1: %s" % (d["rc"], d["stderr"].strip()))
for m in ("gbench", "gdump", "full"):
    for d in res[m]:
        if d["rc"] != 0:
            broken.append("%s exited %d: %s" % (m, d["rc"], d["stderr"].strip()))
if broken:
    print("  BROKEN:")
    for b in sorted(set(broken)):
        print("    " + b)
    sys.exit(1)
gfuncs = json.loads(res["gbench"][0]["stdout_tail"])["funcs"]
med = lambda m, k="total_s": st.median(d[k] for d in res[m])
idx = med("idx")
gin = st.median(json.loads(d["stdout_tail"])["seconds"] for d in res["gbench"])
gwhole = med("gdump")
full = med("full")
kb = {m: st.median(d["kb"] for d in res["rss_" + m]) for m in ("base", "idx", "full")}
lim = 3 * pcln / 1024

def verdict(ok):
    return "met" if ok else "NOT met"

print("\n  round   retop index-only   gosym in-process   gosym whole process   retop full listing")
for i, (a, b, c, d) in enumerate(zip(res["idx"], res["gbench"], res["gdump"], res["full"]), 1):
    print("  %5d %16.3f s %16.3f s %19.3f s %18.3f s" % (
        i, a["total_s"], json.loads(b["stdout_tail"])["seconds"], c["total_s"], d["total_s"]))
print("\n  functions: gosym %d, retop full listing %d lines" % (gfuncs, nfull))
print("  medians:")
print("  retop index only (wall, whole process)     %.3f s" % idx)
print("  gosym in-process (debug/gosym load)        %.3f s" % gin)
print("  gosym whole process (dump > /dev/null)     %.3f s" % gwhole)
print("  ratio gosym in-process / retop index only  %.2f   (target >= 2: %s)" % (gin / idx, verdict(gin / idx >= 2)))
print("  ratio gosym whole process / retop index    %.2f" % (gwhole / idx))
print("  retop full listing with RET sites          %.3f s   (target < 1 s: %s)" % (full, verdict(full < 1)))
print("  ratio retop full listing / gosym whole     %.2f" % (full / gwhole))
print("  peak RSS: retop -V (baseline) %d KiB, index only %d KiB, full listing %d KiB"
      % (kb["base"], kb["idx"], kb["full"]))
print("  3x .gopclntab = %d KiB" % lim)
for m, name in (("idx", "index only"), ("full", "full listing")):
    print("  %-12s peak %6d KiB: %s; above baseline %6d KiB: %s" % (
        name, kb[m], verdict(kb[m] <= lim), kb[m] - kb["base"], verdict(kb[m] - kb["base"] <= lim)))
EOF
